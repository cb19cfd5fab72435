// Which project files are packaged and analysed: `.gitignore` (root and nested) plus the built-in patterns.
// Secrets (.env and friends) are always ignored, whatever the .gitignore says.
import { readdirSync, readFileSync, type Dirent } from 'node:fs';
import path from 'node:path';
import ignore, { type Ignore } from 'ignore';

export const BUILTIN_IGNORES = [
  '.git/', '.hg/', '.svn/', '__pycache__/', '*.pyc', '*.pyo', '.venv/', 'venv/', 'env/', '.env/', 'node_modules/',
  '.vscode/', '.idea/', '.strato/', '.pytest_cache/', '.mypy_cache/', '.ruff_cache/', '.tox/', '.ipynb_checkpoints/',
  'dist/', 'build/', '*.egg-info/', 'tests/', 'test/', 'test_*.py', '*_test.py', 'conftest.py', 'docs/', '*.md', '!README.md',
  '.DS_Store',
];
/** Never packaged, even when .gitignore re-includes them. */
export const SECRET_PATTERNS = ['.env', '.env.*', '!.env.example', '*.pem', '*.key', 'id_rsa', 'id_ed25519', '.netrc', '.pypirc', '.npmrc'];

export interface ProjectFiles {
  /** Every packaged file, project-relative POSIX paths, sorted. */
  files: string[];
  /** The Python files among them. */
  pythonFiles: string[];
}

export function createIgnore(root: string): (rel: string, isDir: boolean) => boolean {
  const builtin = ignore().add(BUILTIN_IGNORES);
  const secrets = ignore().add(SECRET_PATTERNS);
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
  return (rel, isDir) => {
    const p = isDir ? `${rel}/` : rel;
    if (secrets.ignores(p) || builtin.ignores(p)) return true;
    // Apply each .gitignore from the root down to the file's folder, relative to its own folder.
    const parts = rel.split('/');
    for (let i = 0; i < parts.length; i++) {
      const dir = parts.slice(0, i).join('/');
      const rules = gitignoreOf(dir);
      if (rules && rules.ignores(isDir ? `${parts.slice(i).join('/')}/` : parts.slice(i).join('/'))) return true;
    }
    return false;
  };
}

export function listProjectFiles(root: string): ProjectFiles {
  const isIgnored = createIgnore(root);
  const files: string[] = [];
  const visit = (dir: string) => {
    let entries: Dirent[];
    try {
      entries = readdirSync(path.join(root, dir), { withFileTypes: true });
    } catch {
      return;
    }
    for (const e of entries) {
      const rel = dir ? `${dir}/${e.name}` : e.name;
      if (e.isDirectory()) {
        if (!isIgnored(rel, true)) visit(rel);
      } else if (e.isFile() && !isIgnored(rel, false)) {
        files.push(rel);
      }
    }
  };
  visit('');
  files.sort();
  return { files, pythonFiles: files.filter((f) => f.endsWith('.py')) };
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
