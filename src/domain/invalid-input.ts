// What pure logic throws when the input it was given cannot be used (a cursor that is not a date,
// rules of the wrong shape, a crawl with no seeds). It knows nothing of HTTP: the API's error
// handler answers it as a 400 whose body is {...details, error: message}.
export class InvalidInputError extends Error {
  readonly details: Record<string, unknown>;
  constructor(message: string, details: Record<string, unknown> = {}) {
    super(message);
    this.name = 'InvalidInputError';
    this.details = details;
  }
}
