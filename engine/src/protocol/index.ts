// What both sides of every connection agree on: control-plane wire types, the manifest, the data-dir and key-file
// layout, the endpoint kind, app and environment names, and the language server's commands (layout.ts reads files,
// so the platform and the API client import it directly).
export * from './controlPlane';
export * from './debug';
export * from './endpointKind';
export * from './jobs';
export * from './logs';
export * from './lsp';
export * from './manifest';
export * from './names';
