// Addresses a server listens on, as URLs: one place for the bracketing of IPv6 addresses and for what a wildcard
// address (every interface) means to a client on the same machine.
import { parameterMessage } from '../catalog/parameterRules';

/** `0.0.0.0` or `::`: every interface, an address to listen on but not to call. */
export const isWildcardHost = (host: string): boolean => host === '0.0.0.0' || host === '::';

/** `host:port`, an IPv6 address in brackets. */
export const hostPort = (host: string, port: number): string => `${host.includes(':') ? `[${host}]` : host}:${port}`;

/** The http URL a client on this machine calls a server listening on `host` at (loopback for a wildcard). */
export const localUrl = (host: string, port: number): string => `http://${hostPort(isWildcardHost(host) ? '127.0.0.1' : host, port)}`;

/**
 * An http(s) URL of a server, parsed; or the sentence saying what is wrong with `value`, given as `what` (a flag, a
 * variable) and what it is for (`example`: a URL of the right kind, shown in the sentence).
 */
export function parseServerUrl(value: string, what: string, example: string): URL | { problem: string } {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return { problem: parameterMessage('url-invalid', { what, value: JSON.stringify(value), example }) };
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    return { problem: parameterMessage('url-scheme', { what, value: JSON.stringify(value), example }) };
  return url;
}
