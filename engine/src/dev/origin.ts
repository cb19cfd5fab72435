// Which requests the dev server answers: a Host that names this machine (a loopback name, an IP literal or the
// --host it listens on) and, from a browser, an Origin equal to that Host. This stops other web pages and DNS rebinding.
import { isIP } from 'node:net';

export interface OriginVerdict {
  ok: boolean;
  /** Why it was refused, in one sentence a developer can act on. */
  reason?: string;
}

/** The host name without port or IPv6 brackets, lower-cased; undefined when the header is not host[:port]. */
export function hostName(hostHeader: string): string | undefined {
  const m = /^(\[[0-9a-fA-F:.]+\]|[^:[\]]+)(?::(\d{1,5}))?$/.exec(hostHeader.trim());
  if (!m) return undefined;
  return m[1].replace(/^\[|\]$/g, '').toLowerCase();
}

/** A name DNS rebinding cannot take over: an IP literal, localhost or *.localhost, or the host the server listens on. */
export function isTrustedHost(name: string, listenHost: string): boolean {
  if (isIP(name)) return true;
  if (name === 'localhost' || name.endsWith('.localhost')) return true;
  return name === listenHost.toLowerCase();
}

export function checkOrigin(headers: { host?: string; origin?: string; 'sec-fetch-site'?: string }, listenHost: string): OriginVerdict {
  const host = headers.host ?? '';
  const name = hostName(host);
  if (!name || !isTrustedHost(name, listenHost)) {
    return {
      ok: false,
      reason:
        `the Host header "${host}" does not name this machine: open the dev server as http://localhost:<port> (or start it with --host NAME to ` +
        `use another name).`,
    };
  }
  const origin = headers.origin;
  if (origin !== undefined && origin.toLowerCase() !== `http://${host.toLowerCase()}`) {
    return { ok: false, reason: `cross-site request from origin "${origin}" refused: only pages served by this dev server (http://${host}) may call it.` };
  }
  if (origin === undefined && headers['sec-fetch-site'] === 'cross-site') {
    return { ok: false, reason: 'cross-site request refused: only pages served by this dev server may call it.' };
  }
  return { ok: true };
}
