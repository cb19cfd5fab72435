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
