// The API, assembled in tiers:
//   1. external plugins — OpenAPI (@fastify/swagger collects every route's schema);
//   2. app plugins      — the error handler, identity (chosen once, at startup);
//   3. routes           — one plain fastify plugin per group in src/api/routes/, each calling the
//                         services (src/api/services/) built once from the dependencies.
// Validation: body schemas are compiled strictly (no type coercion; unknown keys are a 400 — write
// `additionalProperties: false`); querystring schemas coerce and DROP unknown keys; params and
// headers coerce and keep everything.
import { randomUUID } from 'node:crypto';
import { AjvCompiler } from '@fastify/ajv-compiler';
import Fastify, { LogController, type FastifyInstance, type FastifyServerOptions } from 'fastify';
import type { AppDeps, AppInput } from './deps.ts';
import { errorHandlerPlugin, frameworkErrorHandler } from './error-handler.ts';
import { identityPlugin, selectIdentity, type IdentityResolver } from './identity.ts';
import { jsonBodyPlugin } from './json-body.ts';
import { clientsPlugin } from './plugins/clients.ts';
import { dbPlugin } from './plugins/db.ts';
import { registerOpenApi } from './plugins/openapi.ts';
import { useRequestHooks } from './plugins/request-hooks.ts';
import { temporalPlugin } from './plugins/temporal.ts';
import { registerRoutes } from './routes/index.ts';
import { createServices } from './services/index.ts';

export interface AppOptions {
  /** fastify logger option; tests pass false (or a level) */
  logger?: FastifyServerOptions['logger'];
  /** the identity resolver; default: selectIdentity(config.identity) */
  identity?: IdentityResolver;
  /** no Temporal client given: connect one of the app's own when crawls are configured (plugins/temporal.ts) */
  connectTemporal?: boolean;
}

type Part = 'body' | 'querystring' | 'params' | 'headers';

// allErrors stays false (a DoS vector); union types (['string','null']) are used in schemas.
const BASE_AJV = { useDefaults: true, allErrors: false, allowUnionTypes: true, strictTypes: false } as const;
/** Per request part: body strict, querystring drops unknown keys, params/headers coerce only. */
export const AJV_OPTIONS: Record<Part, Record<string, unknown>> = {
  body: { ...BASE_AJV, coerceTypes: false, removeAdditional: false },
  querystring: { ...BASE_AJV, coerceTypes: 'array', removeAdditional: 'all' },
  params: { ...BASE_AJV, coerceTypes: 'array', removeAdditional: false },
  headers: { ...BASE_AJV, coerceTypes: 'array', removeAdditional: false },
};

const ajvFactory = AjvCompiler();

/** One Ajv per request part, all sharing fastify's external schemas. */
function buildValidator(externalSchemas: unknown, options: unknown) {
  const plugins = (options as { plugins?: unknown[] } | undefined)?.plugins ?? [];
  const compilers = Object.fromEntries(
    (Object.keys(AJV_OPTIONS) as Part[]).map((part) => [part, ajvFactory(externalSchemas as never, { customOptions: AJV_OPTIONS[part], plugins } as never)]),
  ) as Record<Part, ReturnType<typeof ajvFactory>>;
  return (route: { schema: unknown; method: string; url: string; httpPart?: string }) => {
    const part = (route.httpPart ?? 'body') as Part;
    return (compilers[part] ?? compilers.body)(route as never);
  };
}

export async function buildApp(input: AppInput, opts: AppOptions = {}): Promise<FastifyInstance> {
  const app = Fastify({
    logger: opts.logger ?? { level: 'info' },
    genReqId: () => randomUUID(),
    // one line per request comes from our own onResponse hook (fastify's pair of lines is off)
    logController: new LogController({ disableRequestLogging: true }),
    // long enough that an oversize id reaches its schema (a 400 naming the field), not a 404
    routerOptions: { maxParamLength: 1000 },
    frameworkErrors: frameworkErrorHandler,
    bodyLimit: 1024 * 1024,
    schemaController: { compilersFactory: { buildValidator: buildValidator as never } },
  });
  useRequestHooks(app, { publicUrl: input.config.api.publicUrl });

  // 1. external plugins (every route documents the answers given before its handler, 421 431 …)
  await registerOpenApi(app);

  // 2. app plugins: the clients (each given, or the app's own and closed by app.close()), then the rest
  await app.register(dbPlugin, { config: input.config, given: input.db });
  await app.register(temporalPlugin, { config: input.config, given: input.temporal, connect: opts.connectTemporal === true });
  await app.register(clientsPlugin, { config: input.config, given: input });
  const deps: AppDeps = { ...input, ...app.clients, db: app.db, temporal: app.temporal };
  await app.register(errorHandlerPlugin);
  await app.register(jsonBodyPlugin);
  const resolver = opts.identity ?? selectIdentity(deps.config.identity, app.log);
  await app.register(identityPlugin, { resolver });

  // 3. routes, calling services built once, here
  await registerRoutes(app, { deps, services: createServices(deps), resolver });
  return app;
}
