// The running dev server of a project, as `.strato/dev.json` records it while `strato dev` runs: its URL and port,
// and the live- endpoints it has provisioned so far. The extension follows this file (status bar, views, Run on the
// dev server), whoever started the server. Light on purpose: no build, no parser, no platform.
import fs from 'node:fs';
import path from 'node:path';
import { pidAlive } from '../protocol/layout';
import { processStartedAt } from '../util/procfs';

export interface DevState {
  pid: number;
  /** The dev server's base URL, e.g. http://localhost:8888. */
  url: string;
  port: number;
  startedAt: number;
  app: string;
  /** The platform its live- endpoints run on. */
  platformUrl: string;
  /** Provisioned so far: the name in the code, the live- endpoint's name and id. */
  endpoints: Array<{ name: string; liveName: string; id: string }>;
}

/** The boot time /proc gives is to the second: a process started this much after the record may still be its writer. */
const PID_START_SLACK_MS = 2000;

export function devStateFile(root: string): string {
  return path.join(root, '.strato', 'dev.json');
}

/**
 * The project's dev server while its process runs; null otherwise: a file left by a killed server is ignored, and so
 * is one whose pid another process holds now (it started after the file was written: a reboot, pids reused).
 */
export function readDevState(root: string): DevState | null {
  let s: DevState;
  try {
    s = JSON.parse(fs.readFileSync(devStateFile(root), 'utf8')) as DevState;
  } catch {
    return null;
  }
  if (typeof s.pid !== 'number' || typeof s.url !== 'string' || !Array.isArray(s.endpoints) || !pidAlive(s.pid)) return null;
  const started = processStartedAt(s.pid);
  return started !== undefined && typeof s.startedAt === 'number' && started > s.startedAt + PID_START_SLACK_MS ? null : s;
}

/** Written whole through a rename, so that a reader never sees half of it. */
export function writeDevState(root: string, s: DevState): void {
  const file = devStateFile(root);
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const tmp = `${file}.${process.pid}.tmp`;
  fs.writeFileSync(tmp, JSON.stringify(s, null, 2));
  fs.renameSync(tmp, file);
}

/** Removes the file if it is still this process's (a second dev server may have replaced it). */
export function removeDevState(root: string, pid = process.pid): void {
  try {
    const s = JSON.parse(fs.readFileSync(devStateFile(root), 'utf8')) as DevState;
    if (s.pid === pid) fs.rmSync(devStateFile(root), { force: true });
  } catch {
    // gone already
  }
}
