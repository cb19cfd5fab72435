// Which project files are packaged and analysed: `.gitignore` (root and nested) plus the built-in patterns.
// Secrets (.env, keys, cloud credentials) are left out whatever the .gitignore says, unless .stratoinclude names them.
import { readdirSync, readFileSync, realpathSync, statSync, type Dirent } from 'node:fs';
import path from 'node:path';
import ignore, { type Ignore } from 'ignore';
import { projectMarkers } from '../catalog';

export const BUILTIN_IGNORES = [
  '.git/',
  '.hg/',
  '.svn/',
  '__pycache__/',
  '*.pyc',
  '*.pyo',
  '.venv/',
  'venv/',
  'env/',
  '.env/',
  'node_modules/',
  '.vscode/',
  '.idea/',
  '.strato/',
  '.pytest_cache/',
  '.mypy_cache/',
  '.ruff_cache/',
  '.tox/',
  '.ipynb_checkpoints/',
  'dist/',
  'build/',
  '*.egg-info/',
  'tests/',
  'test/',
  'test_*.py',
  '*_test.py',
  'conftest.py',
  'docs/',
  '*.md',
  '!README.md',
  '.DS_Store',
  // Wheels in the project (PIP_FIND_LINKS=./wheels) are what the build installs from: the artifact holds them installed.
  '*.whl',
];
/** Never packaged, even when .gitignore re-includes them; only a line in .stratoinclude packages one on purpose. */
export const SECRET_PATTERNS = [
  '.env',
  '.env.*',
  '!.env.example',
  '.envrc',
  '*.pem',
  '*.key',
  '*.p12',
  '*.pfx',
  'id_rsa',
  'id_dsa',
  'id_ecdsa',
  'id_ed25519',
  '.ssh/',
  '.aws/',
  '.kube/',
  '.docker/config.json',
  '.gnupg/',
  '.git-credentials',
  'credentials.json',
  'secrets.toml',
  '.pgpass',
  '.netrc',
  '.pypirc',
  '.npmrc',
  '.bash_history',
  '.zsh_history',
  '.sh_history',
  '.python_history',
  '.psql_history',
  '.mysql_history',
  '.node_repl_history',
  '.lesshst',
];
/** The project-root file whose gitignore-style lines name secret-looking files to package on purpose. */
export const INCLUDE_FILE = '.stratoinclude';

export interface ProjectFiles {
  /** Every packaged file, project-relative POSIX paths, sorted. */
  files: string[];
  /** The Python files among them. */
  pythonFiles: string[];
  /** Files and folders left out because they look like secrets (folders end with '/'), sorted. */
  secretsLeftOut: string[];
}

export type IgnoreReason = false | 'secret' | 'ignored';

export function createIgnore(root: string): (rel: string, isDir: boolean) => boolean {
  const why = ignoreReasons(root);
  return (rel, isDir) => why(rel, isDir) !== false;
}

let builtinIgnore: Ignore | undefined;
let secretsIgnore: Ignore | undefined;

/**
 * Why a path is left out: a secret (unless .stratoinclude names it), a built-in or .gitignore pattern, or not at all.
 * `target`: where a symbolic link at `rel` leads (its real path), when it is one.
 */
export function ignoreReasons(root: string): (rel: string, isDir: boolean, target?: string) => IgnoreReason {
  // The fixed patterns are compiled once per process (the language server asks for every file event).
  builtinIgnore ??= ignore().add(BUILTIN_IGNORES);
  secretsIgnore ??= ignore().add(SECRET_PATTERNS);
  const builtin = builtinIgnore;
  const secrets = secretsIgnore;
  let wanted: Ignore | undefined;
  try {
    wanted = ignore().add(readFileSync(path.join(root, INCLUDE_FILE), 'utf8'));
  } catch {
    wanted = undefined;
  }
  const nested = new Map<string, Ignore>();
  const gitignoreOf = (dir: string): Ignore | undefined => {
    if (!nested.has(dir)) {
      let rules: Ignore | undefined;
      try {
        rules = ignore().add(readFileSync(path.join(root, dir, '.gitignore'), 'utf8'));
      } catch {
        rules = undefined;
      }
      nested.set(dir, rules as Ignore);
    }
    return nested.get(dir);
  };
  return (rel, isDir, target) => {
    const p = isDir ? `${rel}/` : rel;
    const included = wanted?.ignores(p) ?? false;
    // A link is judged by where it leads too: `notes.txt -> ~/.ssh/id_rsa` is the key, whatever its own name.
    const leadsToSecret =
      target !== undefined &&
      secrets.ignores(
        `${target
          .replace(/^[/\\]+/, '')
          .split(path.sep)
          .join('/')}${isDir ? '/' : ''}`,
      );
    if ((secrets.ignores(p) || leadsToSecret) && !included) return 'secret';
    if (included) return false;
    if (builtin.ignores(p)) return 'ignored';
    // Apply each .gitignore from the root down to the file's folder, relative to its own folder.
    const parts = rel.split('/');
    for (let i = 0; i < parts.length; i++) {
      const dir = parts.slice(0, i).join('/');
      const rules = gitignoreOf(dir);
      if (rules && rules.ignores(isDir ? `${parts.slice(i).join('/')}/` : parts.slice(i).join('/'))) return 'ignored';
    }
    return false;
  };
}

function realTarget(link: string): string | undefined {
  try {
    return realpathSync(link);
  } catch {
    return undefined;
  }
}

/** What a folder entry is, a symbolic link judged by what it points to (undefined: neither, or a broken link). */
function kindOf(root: string, rel: string, e: Dirent): 'file' | 'dir' | undefined {
  if (e.isSymbolicLink()) {
    try {
      const st = statSync(path.join(root, rel));
      return st.isDirectory() ? 'dir' : st.isFile() ? 'file' : undefined;
    } catch {
      return undefined;
    }
  }
  return e.isDirectory() ? 'dir' : e.isFile() ? 'file' : undefined;
}

/**
 * The project's files, ignore rules applied. Symbolic links count as what they point to (a shared module linked in
 * from elsewhere is packaged like any file); a link to a folder that encloses it (a loop) is not entered.
 */
export function listProjectFiles(root: string): ProjectFiles {
  const why = ignoreReasons(root);
  const files: string[] = [];
  const secretsLeftOut: string[] = [];
  const visit = (dir: string, enclosing: readonly string[]) => {
    let entries: Dirent[];
    let real: string;
    try {
      real = realpathSync(path.join(root, dir));
      if (enclosing.includes(real)) return;
      entries = readdirSync(path.join(root, dir), { withFileTypes: true });
    } catch {
      return;
    }
    const inside = [...enclosing, real];
    for (const e of entries) {
      const rel = dir ? `${dir}/${e.name}` : e.name;
      const kind = kindOf(root, rel, e);
      if (!kind) continue;
      const reason = why(rel, kind === 'dir', e.isSymbolicLink() ? realTarget(path.join(root, rel)) : undefined);
      if (reason === 'secret') secretsLeftOut.push(kind === 'dir' ? `${rel}/` : rel);
      else if (reason === false) {
        if (kind === 'dir') visit(rel, inside);
        else files.push(rel);
      }
    }
  };
  visit('', []);
  files.sort();
  secretsLeftOut.sort();
  return { files, pythonFiles: files.filter((f) => f.endsWith('.py')), secretsLeftOut };
}

/** Top-level module names the project provides itself (root .py files and package folders). */
export function localModulesOf(files: readonly string[]): Set<string> {
  const out = new Set<string>();
  for (const f of files) {
    if (!f.endsWith('.py')) continue;
    const first = f.split('/')[0];
    out.add(first.endsWith('.py') ? first.slice(0, -3) : first);
  }
  return out;
}

/** Files or folders whose presence says "this folder is a Strato project" (the template writes the first two). */
export const PROJECT_MARKERS = projectMarkers;

export function hasProjectMarker(root: string): boolean {
  return PROJECT_MARKERS.some((m) => {
    try {
      const st = statSync(path.join(root, m));
      return m.endsWith('/') ? st.isDirectory() : st.isFile();
    } catch {
      return false;
    }
  });
}

/** Why `dir` is refused as a project, what was `left` undone, and how to run `command` where it belongs. */
/** What a project without an endpoint is told (build, check, dev): where the decorators may have been missed. */
export function noEndpointFound(where: string): string {
  return (
    `no @Endpoint function found in ${where}: check the decorator syntax (from strato import Endpoint, then @Endpoint(name="...") on a ` +
    `function, or api = Endpoint(...) with @api.post("/path") routes), the .gitignore, and the built-in ignore patterns (tests/, test_*.py, ` +
    `*_test.py, docs/, venv/, .venv/, build/, dist/).`
  );
}

/** The folders right inside `dir` that are projects of their own (a folder of several projects, as a monorepo's). */
export function projectsInside(dir: string): string[] {
  let entries: Dirent[];
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch {
    return [];
  }
  return entries
    .filter((e) => e.isDirectory() && !e.name.startsWith('.') && hasProjectMarker(path.join(dir, e.name)))
    .map((e) => e.name)
    .sort();
}

export function notAProject(dir: string, left: string, command: string): string {
  return `${dir} is not a Strato project (none of ${PROJECT_MARKERS.join(', ')} is there or in a folder above), so ${left}: run ${command} in the project folder, or create one with strato init NAME.`;
}

/**
 * The project a command run in `cwd` acts on: the nearest folder at or above it with a project marker (as the Python
 * package finds it), so that every command run in a subfolder acts on the whole project; undefined outside any.
 */
export function projectRootAt(cwd: string): string | undefined {
  for (let d = path.resolve(cwd); ; d = path.dirname(d)) {
    if (hasProjectMarker(d)) return d;
    if (path.dirname(d) === d) return undefined;
  }
}
