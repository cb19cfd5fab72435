// Typed clients of deployed environments: the TypeScript module (ts-morph, loaded on demand) and the OpenAPI
// document, both from the project model's type hints and the environment's endpoints. For the CLI and the extension.
export { typescriptClient, tsType, type GeneratedClient } from './typescript';
export { clientSurface, type ClientSurface } from './surface';
export { TypeMapper, Names, type JsonType, type NamedShape } from './types';
export { devOpenApiDocument, environmentOpenApiDocument, jsonSchema, type EnvironmentDocument, type ServedFunction } from './openapi';
export { writeClient, clientFileName, CLIENT_LANGUAGES, type ClientLanguage, type WrittenClient } from './write';
