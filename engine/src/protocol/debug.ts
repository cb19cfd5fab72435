// What `strato dev --debug`, its workers (engine/python/strato/_debug.py) and the VS Code extension agree on: the
// folder where each worker announces the loopback port its debugger (debugpy) listens on, and the announcement.
/** The worker environment variable naming the folder; the dev server sets it to <project>/DEBUG_ANNOUNCE_DIR. */
export const DEBUG_DIR_ENV = 'STRATO_DEBUG_DIR';

/** Project-relative folder of the announcements: one `<pid>.json` per worker, removed when the worker stops. */
export const DEBUG_ANNOUNCE_DIR = '.strato/debug';

export interface DebugAnnouncement {
  pid: number;
  host: string;
  port: number;
  /** The endpoint's name on the platform (`live-<name>`). */
  endpoint: string;
  /** The unpacked build the worker runs: the project's files at their project-relative paths. */
  root: string;
  python: string;
}

export function isDebugAnnouncement(v: unknown): v is DebugAnnouncement {
  if (typeof v !== 'object' || v === null) return false;
  const a = v as Record<string, unknown>;
  return (
    Number.isInteger(a.pid) &&
    Number.isInteger(a.port) &&
    typeof a.host === 'string' &&
    typeof a.endpoint === 'string' &&
    typeof a.root === 'string' &&
    typeof a.python === 'string'
  );
}

/** Debugging workers needs them on this machine: a platform at a loopback address (the local one included). */
export function isLoopbackUrl(url: string): boolean {
  try {
    const host = new URL(url).hostname.replace(/^\[|\]$/g, '').toLowerCase();
    return host === 'localhost' || host.endsWith('.localhost') || host === '::1' || /^127\.\d+\.\d+\.\d+$/.test(host);
  } catch {
    return false;
  }
}
