// Dependencies: requirements.txt plus every endpoint's `dependencies`, merged; the base image's packages and
// --exclude removed; the rest installed with pip for Linux x86_64 into the build; excluded packages pip brought in
// as dependencies dropped again, with what only they required.
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
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
  /** pip's options from the requirements files (an index, find-links, constraints), written before the lines. */
  options: string[];
  /** Names that were dropped because the base image has them or --exclude named them. */
  excluded: string[];
  excludeSet: Set<string>;
}

/** What a requirements file asks for: requirement lines, and pip options that apply to the whole install. */
export interface RequirementsFile {
  requirements: string[];
  options: string[];
}

/** Options a requirements file may give that take a value (`--index-url URL`, `-f ./wheels`). */
const VALUE_OPTIONS = new Set(['-i', '--index-url', '--extra-index-url', '-f', '--find-links', '--trusted-host', '--no-binary', '--only-binary']);
/** Options whose value is a path, read relative to the file that names it. */
const PATH_OPTIONS = new Set(['-f', '--find-links']);
const FLAG_OPTIONS = new Set(['--pre', '--prefer-binary', '--no-index']);

/**
 * Reads a requirements file as pip does: comments and line continuations, `-r` files followed (relative to the file
 * that names them), `-c` constraints and index options kept for the install, `-e` requirements installed as regular
 * ones (the artifact holds packages, not links), local paths made absolute (the install runs from the build's folder).
 * An option pip would take but the build cannot is refused, naming the line.
 */
export function readRequirementsFile(file: string, seen: ReadonlySet<string> = new Set()): RequirementsFile {
  const out: RequirementsFile = { requirements: [], options: [] };
  if (!existsSync(file)) {
    if (seen.size === 0) return out;
    throw new UserError(`${[...seen].at(-1)}: -r ${file} names a file that is not there; fix the path (it is read relative to that file)`);
  }
  const dir = path.dirname(file);
  const local = (p: string) => (/^\.{1,2}[\\/]/.test(p) ? path.resolve(dir, p) : p);
  const lines = readFileSync(file, 'utf8')
    .replace(/\\\r?\n/g, ' ')
    .split(/\r?\n/);
  lines.forEach((raw, i) => {
    const line = raw.replace(/(^|\s)#.*$/, '').trim();
    if (!line) return;
    const where = `${path.basename(file)} line ${i + 1}`;
    const m = /^(--?[A-Za-z-]+)(?:[=\s]\s*(.*))?$/.exec(line);
    if (!m) return void out.requirements.push(local(line));
    const [, option, value = ''] = m;
    if (option === '-r' || option === '--requirement') {
      const included = path.resolve(dir, value);
      if (seen.has(included) || included === file) return;
      const inner = readRequirementsFile(included, new Set([...seen, file]));
      out.requirements.push(...inner.requirements);
      out.options.push(...inner.options.filter((o) => !out.options.includes(o)));
    } else if (option === '-c' || option === '--constraint') {
      const constraint = `-c ${path.resolve(dir, value)}`;
      if (!out.options.includes(constraint)) out.options.push(constraint);
    } else if (option === '-e' || option === '--editable') {
      out.requirements.push(local(value));
    } else if (VALUE_OPTIONS.has(option) && value) {
      const given = `${option} ${PATH_OPTIONS.has(option) ? local(value) : value}`;
      if (!out.options.includes(given)) out.options.push(given);
    } else if (FLAG_OPTIONS.has(option) && !value) {
      if (!out.options.includes(option)) out.options.push(option);
    } else {
      throw new UserError(
        `${where}: the pip option ${option} is not taken in a Strato project's requirements (the build installs for Linux x86_64 ` +
          "with its own options); remove it, or set it in pip's environment (PIP_...), which the build passes on",
      );
    }
  });
  return out;
}

export function mergeRequirements(fromFile: RequirementsFile, fromEndpoints: readonly string[], exclude: readonly string[]): MergedRequirements {
  const excludeSet = new Set([...excludedPackages, ...exclude].map(normalizeName));
  const seen = new Set<string>();
  const install: string[] = [];
  const excluded: string[] = [];
  for (const line of [...fromFile.requirements, ...fromEndpoints]) {
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
  return { install, options: fromFile.options, excluded, excludeSet };
}

export interface PipOptions {
  python: string;
  pythonVersion: string;
  target: string;
  requirementsFile: string;
  onLine?: (line: string) => void;
}

export interface InstallOptions extends PipOptions {
  requirements: MergedRequirements;
  /**
   * A folder where the install is kept between builds, once per set of requirements (their lines, the Python version
   * and pip's own environment): a build with the same set links it into `target` instead of running pip again, and
   * a build with another set replaces it. The dev server's saves use it; `strato build` and `deploy` install afresh.
   */
  reuseIn?: string;
  /** Called when pip is about to run (not when an install is reused). */
  onInstall?: () => void;
}

/** Installs the requirements into `target` (the packages only the base image's pulled in left out); true when reused. */
export async function installRequirements(o: InstallOptions): Promise<boolean> {
  const { install, excludeSet } = o.requirements;
  if (!o.reuseIn) {
    o.onInstall?.();
    await pipInstall(o);
    removeExcludedPackages(o.target, excludeSet, install);
    return false;
  }
  const pipEnvironment = Object.entries(process.env).filter(([k]) => k.startsWith('PIP_'));
  const key = createHash('sha256')
    .update(JSON.stringify([install, o.requirements.options, [...excludeSet].sort(), o.pythonVersion, pipEnvironment.sort()]))
    .digest('hex')
    .slice(0, 16);
  const kept = path.join(o.reuseIn, key);
  const done = path.join(kept, '.installed');
  const reused = existsSync(done);
  if (!reused) {
    // Any other set goes: one install is kept, not one per save.
    rmSync(o.reuseIn, { recursive: true, force: true });
    mkdirSync(kept, { recursive: true });
    o.onInstall?.();
    await pipInstall({ ...o, target: kept });
    removeExcludedPackages(kept, excludeSet, install);
    writeFileSync(done, `${install.join('\n')}\n`); // written last: an install cut short is never reused
  }
  mkdirSync(o.target, { recursive: true });
  for (const entry of readdirSync(kept)) if (entry !== '.installed') symlinkSync(path.join(kept, entry), path.join(o.target, entry));
  return reused;
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
    child.on('close', (code, signal) => {
      if (code === 0) return resolve();
      // Stopped by a signal (Ctrl+C, a hang-up): nothing was wrong with the requirements.
      if (signal)
        return reject(
          new UserError(`dependency installation was stopped (${signal}) before it finished: what it installed is not used, and the next build installs again`),
        );
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

/** An installed distribution in pip's target folder: its dist-info folder and what its METADATA requires. */
interface InstalledDist {
  distInfo: string;
  /**
   * Requires-Dist: each dependency's name, the extras it is asked with (`uvicorn[standard]`), and the extras of this
   * distribution its marker names (`; extra == "testing"`: required only when those are asked for).
   */
  requires: Array<{ name: string; extras: string[]; when: string[] }>;
}

function installedDists(target: string): Map<string, InstalledDist> {
  const out = new Map<string, InstalledDist>();
  if (!existsSync(target)) return out;
  for (const entry of readdirSync(target)) {
    if (!entry.endsWith('.dist-info')) continue;
    const distInfo = path.join(target, entry);
    let metadata = '';
    try {
      // Its headers: the long description after the first blank line is the package's README.
      metadata = readFileSync(path.join(distInfo, 'METADATA'), 'utf8').split(/\r?\n\r?\n/, 1)[0];
    } catch {
      /* no METADATA: named by its folder, requiring nothing */
    }
    const name = /^Name:[ \t]*(\S+)/m.exec(metadata)?.[1] ?? /^(.+?)-[^-]+\.dist-info$/.exec(entry)?.[1] ?? entry;
    const requires = [...metadata.matchAll(/^Requires-Dist:[ \t]*([A-Za-z0-9][A-Za-z0-9._-]*)[ \t]*(?:\[([^\]\n]*)\])?[^;\n]*(?:;([^\n]*))?$/gm)].map((m) => ({
      name: normalizeName(m[1]),
      extras: extrasList(m[2] ?? ''),
      when: [...(m[3] ?? '').matchAll(/extra\s*==\s*["']([^"']+)["']/g)].map((x) => normalizeName(x[1])),
    }));
    out.set(normalizeName(name), { distInfo, requires });
  }
  return out;
}

/**
 * Removes from pip's target folder the excluded packages pip brought in as dependencies of others, and every package
 * that only they required: the base image has them (torch comes with sympy, networkx and, built for CUDA, gigabytes
 * of nvidia-* wheels). What the requirements need by another path stays. A requirement given by URL names no package,
 * so with one only the excluded packages themselves go. Returns the names removed.
 */
export function removeExcludedPackages(target: string, exclude: ReadonlySet<string>, requirements: readonly string[] = []): string[] {
  const dists = installedDists(target);
  const roots = requirements.map((line) => ({ name: requirementName(line), extras: requirementExtras(line) }));
  let keep: Set<string>;
  if (roots.some((r) => r.name === undefined)) keep = new Set([...dists.keys()].filter((n) => !exclude.has(n)));
  else {
    // Each package with the extras it was reached with: reached again with a new extra, that extra's edges are followed.
    const reached = new Map<string, Set<string>>();
    const walk = (name: string, extras: readonly string[]) => {
      const d = dists.get(name);
      if (!d || exclude.has(name)) return;
      const before = reached.get(name);
      const added = extras.filter((x) => !before?.has(x));
      if (before && added.length === 0) return;
      reached.set(name, new Set([...(before ?? []), ...extras]));
      for (const r of d.requires) {
        if (r.when.length === 0 ? !before : r.when.some((x) => added.includes(x))) walk(r.name, r.extras);
      }
    };
    for (const r of roots) walk(r.name!, r.extras);
    keep = new Set(reached.keys());
  }
  const removed: string[] = [];
  for (const [name, d] of dists) {
    if (keep.has(name)) continue;
    removeDist(target, d.distInfo);
    removed.push(name);
  }
  return removed.sort();
}

/** The extras a requirement line asks for: `accelerate[testing, dev]>=1`. */
function requirementExtras(line: string): string[] {
  return extrasList(/^\s*[A-Za-z0-9][A-Za-z0-9._-]*\s*\[([^\]]*)\]/.exec(line)?.[1] ?? '');
}

function extrasList(text: string): string[] {
  return text
    .split(',')
    .map((x) => normalizeName(x.trim()))
    .filter(Boolean);
}

/**
 * Deletes one installed distribution: the files its RECORD lists, then the folders they leave empty (a namespace
 * folder such as google/ or nvidia/ that another package shares keeps that package's files), then its dist-info.
 */
function removeDist(target: string, distInfo: string): void {
  const folders = new Set<string>();
  let record = '';
  try {
    record = readFileSync(path.join(distInfo, 'RECORD'), 'utf8');
  } catch {
    /* no RECORD: only the dist-info goes */
  }
  for (const line of record.split('\n')) {
    const file = line.split(',')[0];
    if (!file || file.startsWith('..') || path.isAbsolute(file)) continue;
    rmSync(path.join(target, file), { force: true });
    for (let d = path.dirname(file); d !== '.' && d !== ''; d = path.dirname(d)) folders.add(d);
  }
  // Deepest first, so that a folder is looked at once its subfolders are gone; __pycache__ made later goes too.
  for (const d of [...folders].sort((x, y) => y.split('/').length - x.split('/').length)) {
    const dir = path.join(target, d);
    rmSync(path.join(dir, '__pycache__'), { recursive: true, force: true });
    try {
      if (readdirSync(dir).length === 0) rmSync(dir, { recursive: true, force: true });
    } catch {
      /* already gone */
    }
  }
  rmSync(distInfo, { recursive: true, force: true });
}
