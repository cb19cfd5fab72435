// Debian's Chromium for the tests that look at a real page (/docs, the VS Code workbench): where it is, and the flags
// that keep it offline and quiet on these machines (notes: a closed network, no GPU, root).
import fs from 'node:fs';
import path from 'node:path';

/** Debian's chromium, found on PATH; STRATO_CHROMIUM overrides it. */
export function findChromium(): string {
  if (process.env.STRATO_CHROMIUM) return process.env.STRATO_CHROMIUM;
  for (const dir of (process.env.PATH ?? '').split(path.delimiter)) {
    for (const name of ['chromium', 'chromium-browser']) if (dir && fs.existsSync(path.join(dir, name))) return path.join(dir, name);
  }
  throw new Error('chromium is not on PATH: scripts/test-all.sh installs it (apt-get install chromium)');
}

/** Launch flags: no sandbox (root), no GPU, and none of the background traffic a closed network refuses. */
export const CHROMIUM_ARGS: readonly string[] = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--disable-dev-shm-usage',
];
