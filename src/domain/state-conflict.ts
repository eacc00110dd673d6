// What the ledger throws when a request is well formed but the state of what it names refuses it
// (a level past its deadline, a level with no report slot left). It knows nothing of HTTP: the
// API's error handler answers it as a 409 whose body is {...details, error: message}.
export class StateConflictError extends Error {
  readonly details: Record<string, unknown>;
  constructor(message: string, details: Record<string, unknown> = {}) {
    super(message);
    this.name = 'StateConflictError';
    this.details = details;
  }
}
