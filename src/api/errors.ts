// Errors that are answers. Each knows its status and what the caller is told; src/api/error-handler.ts
// turns any of them into the HTTP answer, so routes and hooks only throw.

/** The base of every error that is an answer: a status, a body and any headers it needs. */
export abstract class DomainError extends Error {
  abstract readonly status: number;
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = new.target.name;
  }
  /** what the caller is told: {"error": "...", ...details} */
  abstract body(): Record<string, unknown>;
  /** headers the answer carries (405's Allow) */
  headers(): Record<string, string> {
    return {};
  }
}

/** An error whose body is {...details, error: message}. */
abstract class DetailedError extends DomainError {
  readonly details: Record<string, unknown>;
  constructor(message: string, details: Record<string, unknown> = {}) {
    super(message);
    this.details = details;
  }
  body(): Record<string, unknown> {
    return { ...this.details, error: this.message };
  }
}

/** 400 with a body that names the problem: { error: message, ...details } */
export class BadRequestError extends DetailedError {
  readonly status = 400;
}

/** 401 { error: 'unauthenticated' } (with a detail only where the caller must learn more) */
export class UnauthenticatedError extends DomainError {
  readonly status = 401;
  /** why, for the log; never sent */
  readonly reason: string;
  readonly detail: string | undefined;
  constructor(reason = 'unauthenticated', detail?: string) {
    super(reason);
    this.reason = reason;
    this.detail = detail;
  }
  body(): Record<string, unknown> {
    return this.detail === undefined ? { error: 'unauthenticated' } : { error: 'unauthenticated', detail: this.detail };
  }
}

/** 403 { error: message, ...details } */
export class ForbiddenError extends DetailedError {
  readonly status = 403;
}

/** 404: also what a caller gets when they may not see the thing — the two must look the same. */
export class NotFoundError extends DomainError {
  readonly status = 404;
  constructor(message = 'not found') {
    super(message);
  }
  body(): Record<string, unknown> {
    return { error: 'not found' };
  }
}

/** 405 with the methods the path does serve in Allow. */
export class MethodNotAllowedError extends DomainError {
  readonly status = 405;
  readonly allow: readonly string[];
  constructor(allow: readonly string[]) {
    super('method not allowed');
    this.allow = allow;
  }
  body(): Record<string, unknown> {
    return { error: 'method not allowed', allow: [...this.allow] };
  }
  override headers(): Record<string, string> {
    return { allow: this.allow.join(', ') };
  }
}

/** 409 */
export class ConflictError extends DetailedError {
  readonly status = 409;
}

/**
 * 503: a server this one needs could not be reached. The caller is told `answer`; the message
 * (and the cause) say more and are only logged.
 */
export class ServiceUnavailableError extends DomainError {
  readonly status = 503;
  readonly answer: string;
  constructor(answer: string, message: string = answer, options?: ErrorOptions) {
    super(message, options);
    this.answer = answer;
  }
  body(): Record<string, unknown> {
    return { error: this.answer };
  }
}
