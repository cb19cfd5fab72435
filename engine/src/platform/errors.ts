// Errors the platform answers with. `PlatformError` carries the HTTP status (jobs API, uploads) or the
// GraphQL error code; its message is one sentence saying what is wrong and how to fix it.

export type ErrorCode = 'BAD_REQUEST' | 'UNAUTHENTICATED' | 'FORBIDDEN' | 'NOT_FOUND' | 'CONFLICT' | 'TOO_LARGE' | 'INTERNAL' | 'UNAVAILABLE';

const STATUS: Record<ErrorCode, number> = {
  BAD_REQUEST: 400,
  UNAUTHENTICATED: 401,
  FORBIDDEN: 403,
  NOT_FOUND: 404,
  CONFLICT: 409,
  TOO_LARGE: 413,
  INTERNAL: 500,
  /** The platform's database cannot be reached: try again shortly. */
  UNAVAILABLE: 503,
};

export class PlatformError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
  ) {
    super(message);
    this.name = 'PlatformError';
  }
  get status(): number {
    return STATUS[this.code];
  }
}

export const badRequest = (m: string) => new PlatformError('BAD_REQUEST', m);
export const notFound = (m: string) => new PlatformError('NOT_FOUND', m);
export const conflict = (m: string) => new PlatformError('CONFLICT', m);
export const forbidden = (m: string) => new PlatformError('FORBIDDEN', m);
export const unavailable = (m: string) => new PlatformError('UNAVAILABLE', m);
