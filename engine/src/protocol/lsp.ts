// What the language server and the VS Code extension agree on: the ids of the commands code lenses carry (the server
// puts them in lenses, the extension registers them) and the shape of their argument. Types and constants only.
import { ENDPOINT_KINDS, type EndpointKind, type HttpMethod } from './endpointKind';

/** Commands the code lenses carry. The client executes them; the server never registers them. */
export const Commands = {
  runEndpoint: 'strato.runEndpoint',
  /** Runs the function once on this machine under the debugger (debugpy). */
  debugEndpoint: 'strato.debugEndpoint',
  deployEndpoint: 'strato.deployEndpoint',
} as const;

/** The single argument of `strato.runEndpoint`, `strato.debugEndpoint` and `strato.deployEndpoint`. */
export interface EndpointCommandArgs {
  /** Endpoint name (the `name=` of `Endpoint(...)`). */
  endpoint: string;
  /** The decorated function or class; for a route, the route's function. */
  function: string;
  /** Workspace-relative POSIX path of the file that declares it. */
  file: string;
  /** The file's URI as the client knows it. */
  uri: string;
  kind: EndpointKind;
  /** Load-balanced routes only. */
  method?: HttpMethod;
  path?: string;
}

/** Guards a command argument that arrives through the untyped command API. */
export function isEndpointCommandArgs(value: unknown): value is EndpointCommandArgs {
  if (typeof value !== 'object' || value === null) return false;
  const v = value as Record<string, unknown>;
  const str = (k: string) => typeof v[k] === 'string';
  return (
    str('endpoint') &&
    str('function') &&
    str('file') &&
    str('uri') &&
    ENDPOINT_KINDS.includes(v.kind as EndpointKind) &&
    (v.method === undefined || str('method')) &&
    (v.path === undefined || str('path'))
  );
}

/** `source` of every diagnostic the server reports, and the identifier of its pull diagnostics. */
export const DIAGNOSTIC_SOURCE = 'strato';

/** The language id of the documents the server handles. */
export const LANGUAGE_ID = 'python';

/**
 * Custom request of the language server: the project model of a workspace folder, from its index (open documents
 * included), so that the extension's views never parse the workspace themselves. Answers null for an unknown folder.
 */
export const PROJECT_MODEL_REQUEST = 'strato/projectModel';

export interface ProjectModelParams {
  /** The workspace folder's URI, as the client knows it. */
  folderUri: string;
}

/**
 * Notification of the language server: the endpoints of these folders changed (names, kinds, files, functions,
 * routes or their lines), by an edit, a save or files that came or went; not sent for changes that leave them alone.
 */
export const PROJECT_CHANGED_NOTIFICATION = 'strato/projectChanged';

export interface ProjectChangedParams {
  /** The workspace folders' URIs, as the client knows them. */
  folderUris: string[];
}
