// The running preview of a project, as `.strato/preview.json` records it: read by a second preview (to replace the
// first) and by the extension's Environments view. Light on purpose: no Docker client, no platform.
import type { EndpointKind } from '../protocol/endpointKind';
import fs from 'node:fs';
import path from 'node:path';

export interface PreviewState {
  pid: number;
  network: string;
  /** The platform in front. */
  url: string;
  startedAt: number;
  environment?: string;
  endpoints?: Array<{ name: string; type: EndpointKind; url: string; routes: Array<{ method: string; path: string }> }>;
}

export function previewStateFile(root: string): string {
  return path.join(root, '.strato', 'preview.json');
}

/** Held by the project's preview from its start to its end (util/pidLock.ts): one preview of a project at a time. */
export function previewLockFile(root: string): string {
  return path.join(root, '.strato', 'preview.lock');
}

/** Whether pid is still a running preview (not a process that reused the number). */
export function isPreviewProcess(pid: number): boolean {
  try {
    return fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('--preview');
  } catch {
    try {
      process.kill(pid, 0); // no /proc (macOS): the pid alone
      return true;
    } catch {
      return false;
    }
  }
}

/** The project's preview while its process runs; null otherwise (a stale file is ignored). */
export function readPreviewState(root: string): PreviewState | null {
  let s: PreviewState;
  try {
    s = JSON.parse(fs.readFileSync(previewStateFile(root), 'utf8')) as PreviewState;
  } catch {
    return null;
  }
  return typeof s.pid === 'number' && isPreviewProcess(s.pid) ? s : null;
}

export function writePreviewState(root: string, s: PreviewState): void {
  fs.mkdirSync(path.dirname(previewStateFile(root)), { recursive: true });
  fs.writeFileSync(previewStateFile(root), JSON.stringify(s, null, 2));
}
