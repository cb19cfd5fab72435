// What the extension reads of the dev server: its state file (dev.json, while `strato dev` runs) and its route table,
// derived from the project model (to run a function through it). The server itself is the CLI's (commands/dev.ts).
export { devRoutes, modulePath, type DevRoute } from './routes';
export { devStateFile, readDevState, type DevState } from './state';
