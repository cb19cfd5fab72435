// The source fingerprint: SHA-256 over the packaged files sorted by relative POSIX path, each as the
// 8-byte big-endian length of the path, the path, the 8-byte length of the content, the content.
// It changes with any packaged source change and drives rolling releases.
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';

function u64(n: number): Buffer {
  const b = Buffer.alloc(8);
  b.writeBigUInt64BE(BigInt(n));
  return b;
}

export function sourceFingerprint(root: string, files: readonly string[]): string {
  const hash = createHash('sha256');
  for (const rel of [...files].sort()) {
    const name = Buffer.from(rel, 'utf8');
    const content = readFileSync(path.join(root, rel));
    hash.update(u64(name.length)).update(name).update(u64(content.length)).update(content);
  }
  return hash.digest('hex');
}
