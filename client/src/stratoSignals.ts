// Cheap signs that a workspace is a Strato project, read at activation (which happens in any Python workspace,
// onLanguage:python): a few small files at the folder's top and the text of open documents. Only then does the
// language server start and index the folder; elsewhere the extension waits for one of these signs, a Strato view
// or a Strato command. Pure apart from reading those files.
import fs from 'node:fs';
import path from 'node:path';

/** `import strato`, `from strato import ...` or `from strato.x import ...` on a line of its own. */
const IMPORTS_STRATO = /^[ \t]*(?:from[ \t]+strato(?:\.\w+)*[ \t]+import\b|import[ \t]+strato\b)/m;

export function importsStrato(text: string): boolean {
  return IMPORTS_STRATO.test(text);
}

/** The orchestration tool's files, which the language server checks too. */
export function isOrchestrationFile(name: string): boolean {
  return /(^|\.)dstack\.ya?ml$/.test(name);
}

function readHead(file: string, bytes = 65536): string {
  try {
    const fd = fs.openSync(file, 'r');
    try {
      const buf = Buffer.alloc(bytes);
      return buf.subarray(0, fs.readSync(fd, buf, 0, bytes, 0)).toString('utf8');
    } finally {
      fs.closeSync(fd);
    }
  } catch {
    return '';
  }
}

/** Python files at a folder's top read for an import of strato (the template's workers sit there). */
const TOP_FILES_READ = 20;

/**
 * A folder that `strato init`, a build or a deploy made, or whose files name strato: `.strato/`, an orchestration
 * file at its top, a Python file at its top importing strato, or Strato in pyproject.toml or requirements.txt.
 */
export function folderLooksLikeStrato(dir: string): boolean {
  let names: string[];
  try {
    names = fs.readdirSync(dir);
  } catch {
    return false;
  }
  if (names.includes('.strato') || names.some(isOrchestrationFile)) return true;
  if (['pyproject.toml', 'requirements.txt'].some((f) => names.includes(f) && /(^|[^\w-])strato([^\w-]|$)/im.test(readHead(path.join(dir, f))))) return true;
  return names
    .filter((n) => n.endsWith('.py'))
    .slice(0, TOP_FILES_READ)
    .some((n) => importsStrato(readHead(path.join(dir, n), 8192)));
}
