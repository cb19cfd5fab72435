// The engine's heavy parts that only some commands need, bundled apart as dist/extension-heavy.js (esbuild.mjs): the
// build and deploy (tree-sitter, tar, pip) and the typed client generator. Loaded through heavy.ts on first use.
export { deployProject, waitForWorkers, DEPLOY_STEPS } from '../../engine/src/deploy';
export { clientFileName, writeClient } from '../../engine/src/clientgen';
