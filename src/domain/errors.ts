// Domain errors, mapped to HTTP in one place (src/api/error-handler.ts).

/** 404: also what a caller gets when they may not see the thing — the two must look the same. */
export class NotFoundError extends Error {
  override name = 'NotFoundError';
  constructor(message = 'not found') {
    super(message);
  }
}

/** 409 */
export class ConflictError extends Error {
  override name = 'ConflictError';
  readonly details: Record<string, unknown>;
  constructor(message: string, details: Record<string, unknown> = {}) {
    super(message);
    this.details = details;
  }
}

/** 400 with a body that names the problem: { error: message, ...details } */
export class BadRequestError extends Error {
  override name = 'BadRequestError';
  readonly details: Record<string, unknown>;
  constructor(message: string, details: Record<string, unknown> = {}) {
    super(message);
    this.details = details;
  }
}

/** 401 { error: 'unauthenticated' } */
export class UnauthenticatedError extends Error {
  override name = 'UnauthenticatedError';
  readonly reason: string;
  constructor(reason = 'unauthenticated') {
    super(reason);
    this.reason = reason;
  }
}
