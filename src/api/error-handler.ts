// The one place errors become HTTP answers; routes and hooks only throw.
//   schema failures      → 400 {"error":"invalid request","details":[{"field":"body.maxDepth","message":"must be integer"}]}
//   answer errors        → their own status, body and headers (src/api/errors.ts: 400, 401, 403,
//                          404, 405, 409, 503; a 503's cause is logged, never sent); the domain's
//                          InvalidInputError is a 400 with the same body as BadRequestError, its
//                          StateConflictError a 409 with the same body as ConflictError
//   Postgres codes       → 23505 unique violation 409; 23514 check, 22P02 invalid text, 23502 not null, 22007/22008 datetime,
//                          22021/22P05 a NUL character 400
//   fastify client errors (bad JSON, wrong content type, body too large) keep their 4xx status
//   router errors (frameworkErrorHandler) → a path not percent-encoded 400, a parameter too long 414
//   anything else        → 500 {"error":"internal error"}, logged with the request id
// A path served for other methods than the one asked answers 405 with Allow, not 404.
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest, FastifySchemaValidationError } from 'fastify';
import fp from 'fastify-plugin';
import { InvalidInputError } from '../domain/invalid-input.ts';
import { StateConflictError } from '../domain/state-conflict.ts';
import { BadRequestError, ConflictError, DomainError, MethodNotAllowedError, NotFoundError } from './errors.ts';
import { UUID_PATTERN } from '../domain/uuid.ts';

export interface ValidationDetail {
  /** where the bad value is: `body.maxDepth`, `querystring.before`, `params.id`, `body.seeds.0` */
  field: string;
  message: string;
}

/** Ajv errors → one entry per field, the path in dotted form prefixed with the request part. */
export function validationDetails(errors: FastifySchemaValidationError[], context: string): ValidationDetail[] {
  return errors.map((e) => {
    const params = e.params as Record<string, unknown>;
    const path = e.instancePath
      .split('/')
      .filter((p) => p !== '')
      .map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'));
    if (e.keyword === 'required' && typeof params.missingProperty === 'string') path.push(params.missingProperty);
    if (e.keyword === 'additionalProperties' && typeof params.additionalProperty === 'string') path.push(params.additionalProperty);
    return { field: [context, ...path].join('.'), message: messageFor(e.keyword, params, e.message) };
  });
}

const FORMAT_NAMES: Record<string, string> = {
  uuid: 'a UUID',
  'date-time': 'an ISO 8601 timestamp with a time zone (date-time)',
  uri: 'a URI',
  date: 'a date (YYYY-MM-DD)',
};

function messageFor(keyword: string, params: Record<string, unknown>, fallback: string | undefined): string {
  if (keyword === 'additionalProperties') return 'is not allowed';
  if (keyword === 'required') return 'is required';
  if (keyword === 'format' && typeof params.format === 'string') return `must be ${FORMAT_NAMES[params.format] ?? params.format}`;
  if (keyword === 'pattern' && params.pattern === UUID_PATTERN) return 'must be a UUID';
  return fallback ?? 'is invalid';
}

const PG_CONFLICT = new Set(['23505']);
// 22021 and 22P05: U+0000 in text or jsonb (from a query string; bodies are refused when parsed)
const PG_BAD_INPUT = new Set(['23514', '22P02', '23502', '22007', '22008', '22001', '22003', '22021', '22P05']);

function pgCode(err: unknown): string | undefined {
  const code = (err as { code?: unknown }).code;
  const isPg = typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code) && typeof (err as { severity?: unknown }).severity === 'string';
  return isPg ? (code as string) : undefined;
}

/** A constraint or input the database refused: 409 for a conflict, 400 for bad input. */
function postgresAnswer(err: FastifyError, code: string, request: FastifyRequest, reply: FastifyReply): FastifyReply {
  const { constraint, column } = err as { constraint?: string; column?: string };
  if (PG_CONFLICT.has(code)) {
    request.log.info({ code, constraint }, 'conflict');
    return reply.code(409).send({ error: 'conflict', constraint: constraint ?? null });
  }
  request.log.info({ code, detail: err.message }, 'rejected by the database');
  return reply.code(400).send({ error: 'invalid request', details: [{ field: column ?? constraint ?? 'request', message: err.message }] });
}

/** The answer for an error of the layers below HTTP: "this input cannot be used" is a 400, "the state refuses it" a 409. */
function asAnswer(err: FastifyError): unknown {
  if (err instanceof InvalidInputError) return new BadRequestError(err.message, err.details);
  if (err instanceof StateConflictError) return new ConflictError(err.message, err.details);
  return err;
}

export function errorHandler(err: FastifyError, request: FastifyRequest, reply: FastifyReply): FastifyReply {
  if (err.validation) {
    const details = validationDetails(err.validation, err.validationContext ?? 'request');
    request.log.info({ details }, 'invalid request');
    return reply.code(400).send({ error: 'invalid request', details });
  }
  const answer = asAnswer(err);
  if (answer instanceof DomainError) {
    if (answer.status >= 500) request.log.error({ err }, answer.body().error as string);
    return reply.code(answer.status).headers(answer.headers()).send(answer.body());
  }
  const code = pgCode(err);
  if (code !== undefined && (PG_CONFLICT.has(code) || PG_BAD_INPUT.has(code))) return postgresAnswer(err, code, request, reply);
  const status = err.statusCode;
  if (typeof status === 'number' && status >= 400 && status < 500) {
    return reply.code(status).send({ error: err.message });
  }
  request.log.error({ err }, 'internal error');
  return reply.code(500).send({ error: 'internal error' });
}

/**
 * What the router refuses before any route or hook: a path that is not valid percent-encoding
 * (400) and a path parameter over maxParamLength (414), in the API's {"error"} shape, without
 * echoing the path.
 */
export function frameworkErrorHandler(err: FastifyError, request: FastifyRequest, reply: FastifyReply): FastifyReply {
  const answers: Record<string, [number, string]> = {
    FST_ERR_BAD_URL: [400, 'the path is not valid percent-encoding'],
    FST_ERR_MAX_PARAM_LENGTH: [414, 'a path parameter is over 1000 characters'],
  };
  const [status, error] = answers[err.code] ?? [err.statusCode ?? 400, err.message];
  request.log.info({ code: err.code }, 'refused by the router');
  return reply.code(status).send({ error });
}

/** The methods served per route path, to tell "no such path" (404) from "not this method" (405). */
export class RouteMethods {
  readonly #routes = new Map<string, { pattern: RegExp; methods: Set<string> }>();

  add(url: string, methods: string | string[]): void {
    let route = this.#routes.get(url);
    if (route === undefined) {
      route = { pattern: pathPattern(url), methods: new Set() };
      this.#routes.set(url, route);
    }
    for (const m of [methods].flat()) route.methods.add(m.toUpperCase());
  }

  /** Every method some route serves at this path (no query string), sorted. */
  allowed(path: string): string[] {
    const methods = new Set<string>();
    for (const route of this.#routes.values()) if (route.pattern.test(path)) route.methods.forEach((m) => methods.add(m));
    return [...methods].sort();
  }
}

/** A route url (`/api/crawls/:id`, `/assets/*`) as a regular expression over request paths. */
export function pathPattern(url: string): RegExp {
  const parts = url.split(/(:[A-Za-z0-9_]+|\*)/).map((part) => {
    if (part === '*') return '.*';
    if (part.startsWith(':')) return '[^/]+';
    return part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  });
  return new RegExp(`^${parts.join('')}$`);
}

export const errorHandlerPlugin = fp(
  async function errorHandlerPlugin(app: FastifyInstance) {
    const routes = new RouteMethods();
    app.addHook('onRoute', (route) => routes.add(route.url, route.method));
    app.setErrorHandler(errorHandler);
    app.setNotFoundHandler(async (request) => {
      const allow = routes.allowed(request.url.split('?')[0]!);
      throw allow.length > 0 ? new MethodNotAllowedError(allow) : new NotFoundError();
    });
  },
  { name: 'error-handler' },
);
