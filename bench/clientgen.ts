// `strato client` of the typed-client test project (every supported type, 6 endpoints) deployed on the embedded
// platform: the TypeScript module (ts-morph loaded and the module formatted) and the OpenAPI document, each a whole
// CLI command, beside `strato env get` of the same environment (the same context and control-plane reads) as the
// baseline measured in the same run.
import { execFileSync } from 'node:child_process';
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startPlatform } from '../engine/src/platform/platform';
import { timeStrato } from './strato';

const repo = path.resolve(__dirname, '..');

async function main() {
  execFileSync(process.execPath, [path.join(repo, 'esbuild.mjs')], { cwd: repo });
  const tmp = mkdtempSync(path.join(os.tmpdir(), 'strato-bench-clientgen-'));
  const dir = path.join(tmp, 'typed');
  cpSync(path.join(repo, 'test', 'fixtures', 'clientgen'), dir, { recursive: true });
  const platform = await startPlatform({ dataDir: path.join(tmp, 'data'), port: 0, apiKey: 'bench-key', writeStateFile: false, log: () => {} });
  const env = { STRATO_API_URL: platform.url, STRATO_API_KEY: platform.apiKey };
  try {
    await timeStrato(['deploy'], dir, env);
    const times = (args: string[]) => async () => {
      const out: number[] = [];
      for (let i = 0; i < 5; i++) out.push(await timeStrato(args, dir, env));
      return [...out].sort((a, b) => a - b)[2];
    };
    const envGet = await times(['env', 'get', 'production', '--json'])();
    const ts = await times(['client', '--lang', 'ts', '--out', 'client'])();
    const openapi = await times(['client', '--lang', 'openapi', '--out', 'client'])();
    console.log('strato client of a 6-endpoint project on the embedded platform (whole CLI command, median of 5)');
    console.log(`  --lang ts       ${ts.toFixed(0)} ms  (${(ts / envGet).toFixed(1)}x env get: analysis, ts-morph, formatting)`);
    console.log(`  --lang openapi  ${openapi.toFixed(0)} ms  (${(openapi / envGet).toFixed(1)}x env get)`);
    console.log(`  env get         ${envGet.toFixed(0)} ms  (baseline)`);
  } finally {
    await platform.close();
    rmSync(tmp, { recursive: true, force: true });
  }
}

main();
