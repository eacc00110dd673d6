// JSON Schemas shared by every route group. Request schemas are the contract: body schemas are
// compiled strictly (no coercion, unknown keys are a 400), querystring schemas drop unknown keys
// (see validatorCompilers in app.ts).

/** A plain UUID (ajv's `uuid` format alone would also accept a `urn:uuid:` prefix). */
export const UUID_PATTERN = '^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$';

/** `:id` must be a UUID: anything else is a 400 before any lookup or authorization. */
export const uuidParam = {
  type: 'object',
  properties: { id: { type: 'string', format: 'uuid', pattern: UUID_PATTERN } },
  required: ['id'],
  additionalProperties: false,
} as const;

/** Any error answer: {"error": "...", ...details}. Extra keys are kept (BadRequestError details). */
export const errorBody = {
  type: 'object',
  properties: {
    error: { type: 'string' },
    details: {
      type: 'array',
      items: { type: 'object', properties: { field: { type: 'string' }, message: { type: 'string' } }, additionalProperties: true },
    },
  },
  required: ['error'],
  additionalProperties: true,
} as const;

/** The error answers every authenticated route can give; add 404/409 where they apply. */
export const errorResponses = {
  400: { description: 'invalid request (the details name each field)', ...errorBody },
  401: { description: 'no identity, or an invalid token', ...errorBody },
  500: { description: 'internal error', ...errorBody },
  503: { description: 'the identity provider could not be reached', ...errorBody },
} as const;

export const notFoundResponse = { 404: { description: 'not found, or not yours to see (the two are indistinguishable)', ...errorBody } } as const;

/**
 * For routes that take no body: nothing, or an empty JSON object. No `type` at the top so an
 * absent body (undefined) passes; anything that is not an object is refused by `not`.
 */
export const noBody = {
  description: 'no body (or {})',
  not: { type: ['array', 'string', 'number', 'integer', 'boolean'] },
  additionalProperties: false,
} as const;
