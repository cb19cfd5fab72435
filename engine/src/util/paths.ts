// Where the files the engine loads at run time live, whether it runs bundled (dist/) or from source.
import { accessSync, constants, existsSync, statSync } from 'node:fs';
import path from 'node:path';
import { UserError } from './errors';

/** The folder that holds the Python package `strato` (dist/python in a bundle, engine/python in the repo). */
export function pythonPackageRoot(): string {
  const candidates = [path.join(__dirname, 'python'), path.resolve(__dirname, '../../python'), path.resolve(__dirname, '../python')];
  for (const c of candidates) if (existsSync(path.join(c, 'strato', '__init__.py'))) return c;
  throw new Error(
    `the Python package strato was not found beside the engine (looked in ${candidates.map((c) => path.relative(process.cwd(), c)).join(', ')}); run ` +
      `npm run build`,
  );
}

/** The Python interpreter for builds and workers: the one given (--python), else STRATO_PYTHON, else python3. */
export function pythonExecutable(given?: string): string {
  return given || process.env.STRATO_PYTHON || 'python3';
}

/**
 * The interpreter workers will run (pythonExecutable), refused at start when it is not there: a path that is no
 * executable file, or a name found in no folder of PATH. Without this a platform started fine and every worker then
 * failed with ENOENT at its first job.
 */
export function checkedPythonExecutable(given?: string): string {
  const python = pythonExecutable(given);
  const source = given ? '--python' : process.env.STRATO_PYTHON ? 'STRATO_PYTHON' : 'the default interpreter';
  const executable = (file: string) => {
    try {
      accessSync(file, constants.X_OK);
      return statSync(file).isFile();
    } catch {
      return false;
    }
  };
  const found = python.includes('/')
    ? executable(python)
    : (process.env.PATH ?? '').split(path.delimiter).some((dir) => dir && executable(path.join(dir, python)));
  if (!found)
    throw new UserError(
      `${source} ${python} ${python.includes('/') ? 'is not an executable file' : 'is not found in any folder of PATH'}: give a Python 3 ` +
        'interpreter with --python or STRATO_PYTHON (e.g. /usr/bin/python3)',
    );
  return python;
}
