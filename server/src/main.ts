// Entry point of the language server: `node dist/server.js --stdio` for any LSP client, or `--node-ipc` as
// vscode-languageclient starts it. createConnection reads the transport from the command line.
import { createConnection, ProposedFeatures } from 'vscode-languageserver/node';
import { startServer } from './server';

const TRANSPORTS = ['--stdio', '--node-ipc', '--socket', '--pipe'];
if (!process.argv.slice(2).some((a) => TRANSPORTS.some((t) => a === t || a.startsWith(`${t}=`)))) process.argv.push('--stdio');

const connection = createConnection(ProposedFeatures.all);
// A fault in one request must not take the editor's help down with it; each handler also guards itself.
const report = (what: string) => {
  try {
    connection.console.error(`strato: ${what}`);
  } catch {
    // The client is gone; the connection ends the process.
  }
};
process.on('uncaughtException', (error) => report(`uncaught ${error.stack ?? error.message}`));
process.on('unhandledRejection', (reason) => report(`unhandled ${reason instanceof Error ? (reason.stack ?? reason.message) : String(reason)}`));
startServer(connection);
