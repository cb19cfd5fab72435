// Scratch copies of the fixture workspace for tests that change files on disk, with the files git could not
// keep in the fixture itself (a .gitignore and the folder it ignores).
import { cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { FIXTURES } from './lspClient';

export interface Workspace {
  root: string;
  file(rel: string): string;
  write(rel: string, text: string): string;
  remove(rel: string): string;
  dispose(): void;
}

export function copyWorkspace(): Workspace {
  const root = mkdtempSync(path.join(os.tmpdir(), 'strato-lsp-'));
  cpSync(path.join(FIXTURES, 'workspace'), root, { recursive: true });
  const file = (rel: string) => path.join(root, ...rel.split('/'));
  const write = (rel: string, text: string) => {
    mkdirSync(path.dirname(file(rel)), { recursive: true });
    writeFileSync(file(rel), text);
    return file(rel);
  };
  write('.gitignore', 'scratch/\n');
  // Ignored by .gitignore: its errors and its duplicate "embed" must never show.
  write('scratch/ignored.py', 'from strato import Endpoint\n\n\n@Endpoint(name="embed", gpu="NOPE")\ndef scratch(x):\n    return x\n');
  return {
    root,
    file,
    write,
    remove: (rel) => {
      rmSync(file(rel), { recursive: true, force: true });
      return file(rel);
    },
    dispose: () => rmSync(root, { recursive: true, force: true }),
  };
}
