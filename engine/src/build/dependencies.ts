// Dependencies: requirements.txt plus every endpoint's `dependencies`, merged; the base image's packages and
// --exclude removed; the rest installed with pip for Linux x86_64 into the build, transitive exclusions dropped.
import { spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { excludedPackages } from '../catalog';
import { UserError } from '../util/errors';

export const PLATFORMS = ['manylinux_2_28_x86_64', 'manylinux_2_17_x86_64', 'manylinux2014_x86_64'];

/** PEP 503 normalised project name of a requirement line, or undefined for options, URLs without names and blanks. */
export function requirementName(line: string): string | undefined {
  if (/^\s*[a-z][a-z0-9+.-]*:\/\//i.test(line)) return undefined; // git+https://..., https://.../pkg.whl: no name before the URL
  const m = /^\s*([A-Za-z0-9][A-Za-z0-9._-]*)/.exec(line);
  return m ? normalizeName(m[1]) : undefined;
}

export function normalizeName(name: string): string {
  return name.toLowerCase().replace(/[-_.]+/g, '-');
}

export interface MergedRequirements {
  /** The lines to install, in first-seen order. */
  install: string[];
  /** Names that were dropped because the base image has them or --exclude named them. */
  excluded: string[];
  excludeSet: Set<string>;
}

/** Reads requirements.txt lines (comments and pip options dropped; `-r` files are not followed). */
export function readRequirementsFile(file: string): string[] {
  if (!existsSync(file)) return [];
  return readFileSync(file, 'utf8')
    .split(/\r?\n/)
    .map((l) => l.replace(/(^|\s)#.*$/, '').trim())
    .filter((l) => l && !l.startsWith('-'));
}

export function mergeRequirements(fromFile: readonly string[], fromEndpoints: readonly string[], exclude: readonly string[]): MergedRequirements {
  const excludeSet = new Set([...excludedPackages, ...exclude].map(normalizeName));
  const seen = new Set<string>();
  const install: string[] = [];
  const excluded: string[] = [];
  for (const line of [...fromFile, ...fromEndpoints]) {
    const name = requirementName(line);
    if (name && excludeSet.has(name)) {
      if (!excluded.includes(name)) excluded.push(name);
      continue;
    }
    const key = line.replace(/\s+/g, '');
    if (seen.has(key)) continue;
    seen.add(key);
    install.push(line);
  }
  return { install, excluded, excludeSet };
}

export interface PipOptions {
  python: string;
  pythonVersion: string;
  target: string;
  requirementsFile: string;
  onLine?: (line: string) => void;
}

/** Runs pip for the target platform. pip's own environment (PIP_INDEX_URL, PIP_FIND_LINKS, ...) passes through. */
export function pipInstall(o: PipOptions): Promise<void> {
  const args = [
    '-m',
    'pip',
    'install',
    '--target',
    o.target,
    '--python-version',
    o.pythonVersion,
    ...PLATFORMS.flatMap((p) => ['--platform', p]),
    '--implementation',
    'cp',
    '--only-binary=:all:',
    '--upgrade',
    '--no-input',
    '--disable-pip-version-check',
    '--progress-bar',
    'off',
    '--no-warn-script-location',
    '-r',
    o.requirementsFile,
  ];
  return new Promise((resolve, reject) => {
    let child;
    try {
      child = spawn(o.python, args, { env: { ...process.env, PYTHONUNBUFFERED: '1' }, stdio: ['ignore', 'pipe', 'pipe'] });
    } catch (err) {
      reject(new UserError(`could not run ${o.python} to install dependencies: ${(err as Error).message}; install Python 3 or set STRATO_PYTHON.`));
      return;
    }
    const errLines: string[] = [];
    const outLines: string[] = [];
    const split = (sink: string[], emit: boolean) => {
      let buf = '';
      return (chunk: Buffer) => {
        buf += chunk.toString('utf8');
        const lines = buf.split(/\r?\n/);
        buf = lines.pop() ?? '';
        for (const l of lines) {
          sink.push(l);
          if (emit && l.trim()) o.onLine?.(l.trim());
        }
      };
    };
    child.stdout.on('data', split(outLines, true));
    child.stderr.on('data', split(errLines, false));
    child.on('error', (err) =>
      reject(
        new UserError(`could not run ${o.python} to install dependencies (${err.message}); install Python 3 or set STRATO_PYTHON to an interpreter with pip.`),
      ),
    );
    child.on('close', (code) => {
      if (code === 0) return resolve();
      reject(
        new UserError(
          `dependency installation failed (pip exit status ${code}):\n${pipReason(errLines, outLines)}\nCheck the package names and versions in ` +
            `requirements.txt and dependencies=[...]; for a private index or a folder of wheels set PIP_INDEX_URL or PIP_FIND_LINKS. Packages must ` +
            `have Linux x86_64 wheels for Python ${o.pythonVersion}.`,
        ),
      );
    });
  });
}

/** The lines of pip's output that say why it failed, indented as one block. */
export function pipReason(errLines: readonly string[], outLines: readonly string[]): string {
  const relevant = errLines.filter((l) => /^(ERROR|error| {2}|Because|note:|hint:)/.test(l) && !/^\s*$/.test(l) && !/WARNING/.test(l));
  const block = (relevant.length ? relevant : [...errLines, ...outLines].filter((l) => l.trim()).slice(-8)).slice(0, 20);
  return block.map((l) => `  | ${l}`).join('\n');
}

/** Removes excluded packages that pip brought in as transitive dependencies (files listed in their RECORD). */
export function removeExcludedPackages(target: string, exclude: ReadonlySet<string>): string[] {
  if (!existsSync(target)) return [];
  const removed: string[] = [];
  for (const entry of readdirSync(target)) {
    const m = /^(.+?)-[^-]+\.dist-info$/.exec(entry);
    if (!m || !exclude.has(normalizeName(m[1]))) continue;
    const distInfo = path.join(target, entry);
    const record = path.join(distInfo, 'RECORD');
    const tops = new Set<string>();
    if (existsSync(record)) {
      for (const line of readFileSync(record, 'utf8').split('\n')) {
        const file = line.split(',')[0];
        if (file && !file.startsWith('..') && !path.isAbsolute(file)) tops.add(file.split('/')[0]);
      }
    }
    tops.add(m[1]);
    tops.add(`${m[1]}.libs`);
    for (const t of tops) {
      if (t === 'bin' || t === '__pycache__') continue;
      rmSync(path.join(target, t), { recursive: true, force: true });
    }
    rmSync(distInfo, { recursive: true, force: true });
    removed.push(normalizeName(m[1]));
  }
  return removed;
}
