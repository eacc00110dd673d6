// Requests for each operation of an OpenAPI 3 document, generated from its schemas: path
// parameters, query, body and identity headers each fitting, broken, missing, empty, truncated or
// of the wrong type (schema-arbitrary.ts). What an operation may answer is what it documents.
import fc from 'fast-check';
import { anyValue, fitting, type Hints, type JsonSchema } from './schema-arbitrary.ts';
import type { RawRequest } from './raw-http.ts';

export interface Parameter {
  name: string;
  in: 'path' | 'query' | 'header';
  required: boolean;
  schema: JsonSchema;
}

export interface Operation {
  method: string;
  /** as the document writes it: /api/crawls/{id} */
  path: string;
  parameters: Parameter[];
  body: JsonSchema | undefined;
  statuses: Set<number>;
}

interface OpenApiOperation {
  parameters?: Parameter[];
  requestBody?: { content?: Record<string, { schema?: JsonSchema }> };
  responses: Record<string, unknown>;
}

export function operationsOf(doc: { paths: Record<string, Record<string, OpenApiOperation>> }): Operation[] {
  return Object.entries(doc.paths).flatMap(([path, methods]) =>
    Object.entries(methods).map(([method, op]) => ({
      method: method.toUpperCase(),
      path,
      parameters: op.parameters ?? [],
      body: op.requestBody?.content?.['application/json']?.schema,
      statuses: new Set(Object.keys(op.responses).map(Number)),
    })),
  );
}

const printable = fc.stringMatching(/^[\x20-\x7e]{0,40}$/);

function pathValue(p: Parameter, knownIds: readonly string[]): fc.Arbitrary<string> {
  const fits = p.schema.format === 'uuid' && knownIds.length > 0 ? fc.oneof(fc.constantFrom(...knownIds), fc.uuid()) : fitting(p.schema).map(String);
  return fc.oneof(
    { weight: 4, arbitrary: fits },
    { weight: 1, arbitrary: fc.string({ minLength: 1, maxLength: 40 }) },
    { weight: 1, arbitrary: fc.constant('9'.repeat(1100)) },
  );
}

/** One query parameter's pairs: absent, or its values (an array is the key repeated). */
function queryPairs(p: Parameter, hints: Hints): fc.Arbitrary<[string, string][]> {
  const encode = (v: unknown): string => (typeof v === 'string' ? v : JSON.stringify(v));
  const present = anyValue(p.schema, hints, p.name).map((v): [string, string][] =>
    Array.isArray(v) ? v.map((x) => [p.name, encode(x)]) : [[p.name, encode(v)]],
  );
  const absent = fc.constant<[string, string][]>([]);
  const empty = fc.constant<[string, string][]>([[p.name, '']]);
  return fc.oneof({ weight: 3, arbitrary: present }, { weight: 1, arbitrary: absent }, { weight: 1, arbitrary: empty });
}

interface Body {
  text?: string;
  type?: string;
}

function bodyOf(schema: JsonSchema, hints: Hints): fc.Arbitrary<Body> {
  const json = 'application/json';
  return fc.oneof(
    { weight: 5, arbitrary: anyValue(schema, hints).map((v) => ({ text: JSON.stringify(v), type: json })) },
    { weight: 1, arbitrary: fc.constant({}) },
    { weight: 1, arbitrary: fc.constant({ text: '', type: json }) },
    { weight: 1, arbitrary: fc.constantFrom('null', '[]', '"x"', '0', 'true').map((text) => ({ text, type: json })) },
    {
      weight: 2,
      arbitrary: fitting(schema, hints).chain((v) => {
        const text = JSON.stringify(v);
        return fc.nat({ max: Math.max(0, text.length - 1) }).map((n) => ({ text: text.slice(0, n), type: json }));
      }),
    },
    {
      weight: 1,
      arbitrary: fc
        .tuple(printable, fc.constantFrom('text/plain', 'application/x-www-form-urlencoded', 'application/json; charset=utf-16', 'multipart/form-data'))
        .map(([text, type]) => ({ text, type })),
    },
  );
}

function identityHeaders(valid: Record<string, string>): fc.Arbitrary<Record<string, string>> {
  return fc.oneof(
    { weight: 6, arbitrary: fc.constant(valid) },
    { weight: 1, arbitrary: fc.constant({}) },
    { weight: 1, arbitrary: fc.record({ 'x-capture-ledger-subject': printable, 'x-capture-ledger-organizations': printable }) },
    { weight: 1, arbitrary: printable.map((t) => ({ authorization: `Bearer ${t}` })) },
    {
      weight: 1,
      arbitrary: fc.record({
        'x-capture-ledger-subject': fc.constant('alice'),
        'x-capture-ledger-organizations': fc.array(fc.constant('o'), { minLength: 65, maxLength: 70 }).map((o) => o.map((x, i) => `${x}${i}`).join(',')),
      }),
    },
  );
}

export interface GeneratedRequest extends RawRequest {
  headers: Record<string, string>;
}

export interface Context {
  /** identity headers the API accepts */
  valid: Record<string, string>;
  /** ids that exist, for uuid path parameters */
  knownIds: readonly string[];
  hints?: Hints;
}

/** Requests for `op`. */
export function requestsFor(op: Operation, { valid, knownIds, hints = {} }: Context): fc.Arbitrary<GeneratedRequest> {
  const pathParams = op.parameters.filter((p) => p.in === 'path');
  const queryParams = op.parameters.filter((p) => p.in === 'query');
  return fc
    .record({
      path: fc.tuple(...pathParams.map((p) => pathValue(p, knownIds))),
      query: fc.tuple(...queryParams.map((p) => queryPairs(p, hints))),
      body: op.body === undefined ? fc.constant<Body>({}) : bodyOf(op.body, hints),
      identity: identityHeaders(valid),
    })
    .map(({ path, query, body, identity }) => {
      let url = op.path;
      pathParams.forEach((p, i) => (url = url.replace(`{${p.name}}`, encodeURIComponent(path[i]!))));
      const search = new URLSearchParams(query.flat()).toString();
      const headers: Record<string, string> = { ...identity, ...(body.type === undefined ? {} : { 'content-type': body.type }) };
      return { method: op.method, path: search === '' ? url : `${url}?${search}`, headers, ...(body.text === undefined ? {} : { body: body.text }) };
    });
}
