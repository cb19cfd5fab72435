// Errors a user can act on: one sentence saying what is wrong and how to fix it. The CLI prints the
// message without a stack trace; other callers (language server, extension, API) show the same text.

export class UserError extends Error {
  constructor(
    message: string,
    readonly exitCode = 1,
  ) {
    super(message);
    this.name = 'UserError';
  }
}
