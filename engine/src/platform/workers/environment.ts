// The environment a worker process starts with: a short allow-list from the platform's own environment, then the
// endpoint's `env`, then the documented STRATO_* variables; nothing else of the operator's shell reaches a worker.

/** Variables a worker takes from the platform's environment (plus LC_*); everything else is left behind. */
export const WORKER_ENV_ALLOW = [
  'PATH',
  'HOME',
  'USER',
  'LOGNAME',
  'LANG',
  'LANGUAGE',
  'TZ',
  'TMPDIR',
  'TEMP',
  'TMP',
  'TERM',
  'SYSTEMROOT',
  'WINDIR',
  'COMSPEC',
  'PATHEXT',
  'LD_LIBRARY_PATH',
  'SSL_CERT_FILE',
  'SSL_CERT_DIR',
];
/** The operator's way to pass more names through: a comma-separated list in this variable. */
export const WORKER_ENV_PASS_VAR = 'STRATO_WORKER_PASS_ENV';

/** The allow-listed part of `from` (the platform's environment). */
export function inheritedWorkerEnv(from: NodeJS.ProcessEnv = process.env): Record<string, string> {
  const extra = (from[WORKER_ENV_PASS_VAR] ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  const allowed = new Set([...WORKER_ENV_ALLOW, ...extra]);
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(from)) {
    if (v === undefined || k.startsWith('STRATO_')) continue;
    if (allowed.has(k) || k.startsWith('LC_')) out[k] = v;
  }
  return out;
}
