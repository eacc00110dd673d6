// The answers a route can give before its handler runs, added to every route's documented
// responses so the OpenAPI document lists every status a route can answer:
//   421 the Host header names another server (host-check.ts), any route
//   431 the request line and headers are over Node's 16 KiB: a query that long, any route
//   413 and 415 a body too large, or of a type nobody parses: routes that read a body
//   414 a path parameter longer than the router takes (1000 characters): routes with parameters
// Registered before @fastify/swagger, so the document is built from the completed schemas.
import type { FastifyInstance, RouteOptions } from 'fastify';
import { errorAnswer } from './schemas/common.ts';

const EVERY_ROUTE = {
  421: errorAnswer('misdirected request: the Host header is not a name this API answers for'),
  431: { description: 'request header fields too large: the request line (a long query) and headers are over 16 KiB; answered by Node, with no body' },
} as const;

const WITH_BODY = {
  413: errorAnswer('the body is over the route’s size limit'),
  415: errorAnswer('the body’s content type is not application/json'),
} as const;

const WITH_PARAMS = {
  414: errorAnswer('a path parameter is over 1000 characters'),
} as const;

const BODY_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

function answersFor(route: RouteOptions): Record<string, unknown> {
  const methods = [route.method].flat().map((m) => m.toUpperCase());
  return {
    ...EVERY_ROUTE,
    ...(methods.some((m) => BODY_METHODS.has(m)) ? WITH_BODY : {}),
    ...(route.url.includes(':') ? WITH_PARAMS : {}),
  };
}

/** Every route with a schema documents the statuses above; what a route documents itself wins. */
export function documentServerAnswers(app: FastifyInstance): void {
  app.addHook('onRoute', (route) => {
    if (route.schema === undefined) return;
    const own = (route.schema.response ?? {}) as Record<string, unknown>;
    route.schema = { ...route.schema, response: { ...answersFor(route), ...own } };
  });
}
