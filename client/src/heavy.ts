// Loads dist/extension-heavy.js (heavyEntry.ts) the first time a command needs the build, deploy or the client
// generator, so that activating the extension reads only the small bundle. Use it for anything that pulls in the
// parser or the build: importing those from a module of the extension's own bundle puts them back on the start path
// (bench/activation.ts prints both bundles' sizes and load times).
import path from 'node:path';
import type * as Heavy from './heavyEntry';

export type HeavyModule = typeof Heavy;

let loaded: HeavyModule | undefined;

export function heavy(): HeavyModule {
  // A computed path: esbuild leaves this require to run time instead of bundling the module here.
  const file = path.join(__dirname, 'extension-heavy.js');
  loaded ??= require(file) as HeavyModule;
  return loaded;
}
