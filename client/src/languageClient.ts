// Starts the Strato language server (dist/server.js beside this bundle) over Node IPC for Python files:
// diagnostics, quick fixes, hover, completion and the Run/Deploy code lenses all come from it.
import * as path from 'node:path';
import { LanguageClient, TransportKind, type LanguageClientOptions, type ServerOptions } from 'vscode-languageclient/node';
import { restrictedLenses } from './trust';

export async function startLanguageClient(): Promise<LanguageClient> {
  const module = path.join(__dirname, 'server.js');
  const serverOptions: ServerOptions = {
    run: { module, transport: TransportKind.ipc },
    debug: { module, transport: TransportKind.ipc, options: { execArgv: ['--nolazy', '--inspect=6019'] } },
  };
  const clientOptions: LanguageClientOptions = {
    documentSelector: [
      { scheme: 'file', language: 'python' },
      { scheme: 'untitled', language: 'python' },
      // The orchestration tool's task, volume and server files (any language id: YAML support may be absent).
      { scheme: 'file', pattern: '**/{.dstack.yml,*.dstack.yml,.dstack.yaml,*.dstack.yaml}' },
      { scheme: 'file', pattern: '**/.dstack/server/config.{yml,yaml}' },
    ],
    // Restricted Mode: the Run/Debug/Deploy lenses become one that says why and opens the trust editor.
    middleware: { provideCodeLenses: async (doc, token, next) => restrictedLenses(await next(doc, token)) },
  };
  const client = new LanguageClient('strato', 'Strato Language Server', serverOptions, clientOptions);
  await client.start();
  return client;
}
