// Addresses a server listens on, as URLs: one place for the bracketing of IPv6 addresses and for what a wildcard
// address (every interface) means to a client on the same machine.

/** `0.0.0.0` or `::`: every interface, an address to listen on but not to call. */
export const isWildcardHost = (host: string): boolean => host === '0.0.0.0' || host === '::';

/** `host:port`, an IPv6 address in brackets. */
export const hostPort = (host: string, port: number): string => `${host.includes(':') ? `[${host}]` : host}:${port}`;

/** The http URL a client on this machine calls a server listening on `host` at (loopback for a wildcard). */
export const localUrl = (host: string, port: number): string => `http://${hostPort(isWildcardHost(host) ? '127.0.0.1' : host, port)}`;
