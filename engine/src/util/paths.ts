// Where the files the engine loads at run time live, whether it runs bundled (dist/) or from source.
import { existsSync } from 'node:fs';
import path from 'node:path';

/** The folder that holds the Python package `strato` (dist/python in a bundle, engine/python in the repo). */
export function pythonPackageRoot(): string {
  const candidates = [path.join(__dirname, 'python'), path.resolve(__dirname, '../../python'), path.resolve(__dirname, '../python')];
  for (const c of candidates) if (existsSync(path.join(c, 'strato', '__init__.py'))) return c;
  throw new Error(
    `the Python package strato was not found beside the engine (looked in ${candidates.map((c) => path.relative(process.cwd(), c)).join(', ')}); run ` +
      `npm run build`,
  );
}

/** The Python interpreter used for builds and local workers. */
export function pythonExecutable(): string {
  return process.env.STRATO_PYTHON || 'python3';
}
