// Errors a user can act on: one sentence saying what is wrong and how to fix it. The CLI prints the
// message without a stack trace; other callers (language server, extension, API) show the same text.

export class UserError extends Error {
  /** True when the message is already formatted for the terminal (e.g. a list of file:line diagnostics). */
  preformatted = false;
  constructor(
    message: string,
    readonly exitCode = 1,
  ) {
    super(message);
    this.name = 'UserError';
  }
}

/** What a failed listen means to the user: a --host that is not an address of this machine, a port it may not take. */
export function listenError(e: NodeJS.ErrnoException, host: string, port: number): Error {
  if (['ENOTFOUND', 'EAI_AGAIN', 'EADDRNOTAVAIL', 'EINVAL'].includes(e.code ?? ''))
    return new UserError(
      `--host ${host} is not an address of this machine (${e.code}); use 127.0.0.1 (this machine only), 0.0.0.0 (every interface) or one of its own addresses`,
    );
  if (e.code === 'EACCES') return new UserError(`port ${port} on ${host} needs privileges this user lacks; pick one above 1023 with --port`);
  return e;
}

/**
 * A value from a request or a user, quoted for a message: as JSON text, cut after `max` characters (a 7 MB name in a
 * refusal must not make a 7 MB answer) with how long it was.
 */
export function quoted(value: string, max = 100): string {
  return value.length <= max ? JSON.stringify(value) : `${JSON.stringify(value.slice(0, max))}... (${value.length} characters)`;
}
