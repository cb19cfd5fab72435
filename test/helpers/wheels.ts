// Builds real wheels of tiny packages inside a test (no index needed), for pip installs through PIP_FIND_LINKS.
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';

/** The interpreter that has setuptools and wheel for building (Debian's python3 does). */
export const WHEEL_PYTHON = process.env.STRATO_WHEEL_PYTHON || '/usr/bin/python3';

export function buildWheel(workDir: string, wheelsDir: string, name: string, version: string, requires: string[] = []): void {
  const src = path.join(workDir, `${name}-src`);
  mkdirSync(path.join(src, name), { recursive: true });
  writeFileSync(path.join(src, name, '__init__.py'), `VERSION = ${JSON.stringify(version)}\ndef hello():\n    return "hello from ${name}"\n`);
  writeFileSync(
    path.join(src, 'setup.py'),
    `from setuptools import setup\nsetup(name=${JSON.stringify(name)}, version=${JSON.stringify(version)}, packages=[${JSON.stringify(name)}], ` +
      `install_requires=${JSON.stringify(requires)})\n`,
  );
  mkdirSync(wheelsDir, { recursive: true });
  // The machine's pip configuration stays out (a global constraints file may pin a real package of the same name).
  execFileSync(WHEEL_PYTHON, ['-m', 'pip', 'wheel', '--no-deps', '--no-build-isolation', '--no-index', '-q', '-w', wheelsDir, src], {
    stdio: 'pipe',
    env: { ...process.env, PIP_CONFIG_FILE: '/dev/null', PIP_CONSTRAINT: '' },
  });
}
