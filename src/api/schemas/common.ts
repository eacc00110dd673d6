// Schemas shared by every route group, as TypeBox types: each is the JSON Schema fastify validates
// and documents, and the TypeScript type the handler sees (@fastify/type-provider-typebox).
// Request schemas are the contract: body schemas are compiled strictly (no coercion, unknown keys
// are a 400), querystring schemas drop unknown keys (see AJV_OPTIONS in app.ts).
import Type, { type Static, type TSchema } from 'typebox';
import { cursorQuerySchema } from '../../domain/cursor.ts';
import { RULE_ACTIONS, type RuleAction } from '../../domain/rules/index.ts';
import { UUID_PATTERN } from '../../domain/uuid.ts';

export const Uuid = Type.String({ format: 'uuid', pattern: UUID_PATTERN });

/** `:id` must be a UUID: anything else is a 400 before any lookup or authorization. */
export const UuidParams = Type.Object({ id: Uuid }, { additionalProperties: false });

/** follow, capture or skip */
export const RuleActionSchema = Type.Unsafe<RuleAction>({ type: 'string', enum: [...RULE_ACTIONS] });

/** The same type, or null: `{"type": ["string", "null"]}` as before (validated and documented alike). */
export function Nullable<T extends TSchema>(schema: T) {
  const { type, enum: values, ...rest } = schema as unknown as { type: string; enum?: unknown[] };
  return Type.Unsafe<Static<T> | null>({ ...rest, type: [type, 'null'], ...(values === undefined ? {} : { enum: [...values, null] }) });
}

/** Rules as fixed on a crawl: [{"follow": "same-site"}, …] */
export const FixedRules = Type.Array(Type.Unsafe<Record<string, string>>({ type: 'object', additionalProperties: { type: 'string' } }));

/** A crawl row's rules (jsonb), which insertCrawl writes in their fixed form (checkCrawlRules(...).fixed). */
export function fixedRules(rules: unknown[]): Static<typeof FixedRules> {
  return rules as Static<typeof FixedRules>;
}

/** A query with no parameters (unknown ones are dropped). */
export const NoQuery = Type.Object({}, { additionalProperties: false });

/**
 * For routes that take no body: nothing, or an empty JSON object. No `type` at the top so an
 * absent body (undefined, or null) passes; anything that is not an object is refused by `not`.
 */
export const NoBody = Type.Unsafe<Record<string, never> | null | undefined>({
  description: 'no body (or {})',
  not: { type: ['array', 'string', 'number', 'integer', 'boolean'] },
  additionalProperties: false,
});

/** Any error answer: {"error": "...", ...details}. Extra keys are kept (BadRequestError details). */
export const ErrorBody = Type.Object(
  {
    error: Type.String(),
    details: Type.Optional(Type.Array(Type.Object({ field: Type.String(), message: Type.String() }, { additionalProperties: true }))),
  },
  { additionalProperties: true },
);

/** An error answer documented with what it means on this route. */
export function errorAnswer(description: string) {
  return Type.Object(ErrorBody.properties, { additionalProperties: true, description });
}

/** The error answers every authenticated route can give; add 404/409 where they apply. */
export const errorResponses = {
  400: errorAnswer('invalid request (the details name each field)'),
  401: errorAnswer('no identity, or an invalid token'),
  500: errorAnswer('internal error'),
  503: errorAnswer('the identity provider could not be reached'),
} as const;

export const notFoundResponse = { 404: errorAnswer('not found, or not yours to see (the two are indistinguishable)') } as const;

/** `before` and `beforeId`, the keyset cursor of a newest-first list (src/domain/cursor.ts). */
export function CursorQuery(timestampName: string) {
  const { before, beforeId } = cursorQuerySchema(timestampName);
  return { before: Type.Optional(Type.Unsafe<string>(before)), beforeId: Type.Optional(Type.Unsafe<string>(beforeId)) };
}
