// A small Docker Engine API client over the engine's unix socket: what the preview (and image endpoints) use.
// No docker CLI is run: every call is an HTTP request on the socket.
export { DockerEngine, EngineError, socketPath } from './engine';
export * from './resources';
