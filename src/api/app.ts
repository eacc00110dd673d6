// The API, assembled in tiers:
//   1. external plugins — OpenAPI (@fastify/swagger collects every route's schema);
//   2. app plugins      — the error handler, identity (chosen once, at startup);
//   3. routes           — one plain fastify plugin per group in src/api/routes/.
// Validation: body schemas are compiled strictly (no type coercion; unknown keys are a 400 — write
// `additionalProperties: false`); querystring schemas coerce and DROP unknown keys; params and
// headers coerce and keep everything.
import { randomUUID } from 'node:crypto';
import { AjvCompiler } from '@fastify/ajv-compiler';
import swagger from '@fastify/swagger';
import Fastify, { LogController, type FastifyInstance, type FastifyServerOptions } from 'fastify';
import { useHostCheck } from '../http/host-check.ts';
import type { AppDeps } from './deps.ts';
import { errorHandlerPlugin, frameworkErrorHandler } from './error-handler.ts';
import { identityPlugin, selectIdentity, type IdentityResolver } from './identity.ts';
import { jsonBodyPlugin } from './json-body.ts';
import { pickerRoutes } from './picker.ts';
import { documentServerAnswers } from './server-answers.ts';
import { NoQuery } from './schemas/common.ts';
import { createCrawlLevelService } from './services/crawl-levels.ts';
import { createCrawlService } from './services/crawls.ts';
import archiveRequiresRoutes from './routes/archive-requires.ts';
import archiveRoutes from './routes/archives.ts';
import archiveThumbnailRoutes from './routes/archive-thumbnail.ts';
import crawlRulesRoutes from './routes/crawl-rules.ts';
import crawlProgressRoutes from './routes/crawl-progress.ts';
import crawlRoutes from './routes/crawls.ts';
import levelReportRoutes from './routes/level-reports.ts';
import decisionRoutes from './routes/decisions.ts';
import meRoutes from './routes/me.ts';
import searchRoutes from './routes/search.ts';

export interface AppOptions {
  /** fastify logger option; tests pass false (or a level) */
  logger?: FastifyServerOptions['logger'];
  /** the identity resolver; default: selectIdentity(config.identity) */
  identity?: IdentityResolver;
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

export async function buildApp(deps: AppDeps, opts: AppOptions = {}): Promise<FastifyInstance> {
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
  // first of all hooks: a request for another host name (DNS rebinding) is 421 before anything runs
  useHostCheck(app, { publicUrls: [deps.config.api.publicUrl] });
  app.addHook('onSend', async (request, reply) => {
    reply.header('x-request-id', request.id);
  });
  // one log line per request (fastify's default writes two), with the request id as reqId
  app.addHook('onResponse', async (request, reply) => {
    request.log.info({ method: request.method, url: request.url, statusCode: reply.statusCode, ms: Math.round(reply.elapsedTime * 10) / 10 }, 'request');
  });

  // 1. external plugins (every route documents the answers given before its handler, 421 431 …)
  documentServerAnswers(app);
  await app.register(swagger, {
    openapi: {
      openapi: '3.0.3',
      info: { title: 'capture-ledger', version: '0.1.0', description: 'Archive ledger, crawls, and short-lived signed URLs.' },
      components: {
        securitySchemes: {
          bearer: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' },
          devSubject: { type: 'apiKey', in: 'header', name: 'X-Capture-ledger-Subject' },
          devOrganizations: { type: 'apiKey', in: 'header', name: 'X-Capture-ledger-Organizations' },
        },
      },
      security: [{ bearer: [] }, { devSubject: [], devOrganizations: [] }],
    },
  });

  // 2. app plugins
  await app.register(errorHandlerPlugin);
  await app.register(jsonBodyPlugin);
  const resolver = opts.identity ?? selectIdentity(deps.config.identity, app.log);
  await app.register(identityPlugin, { resolver });

  // 3. routes
  app.get(
    '/api/openapi.json',
    { config: { public: true }, schema: { hide: true, querystring: NoQuery, response: { 200: { type: 'object', additionalProperties: true } } } },
    async () => app.swagger(),
  );
  app.get(
    '/healthz',
    {
      config: { public: true },
      schema: { hide: true, response: { 200: { type: 'object', properties: { status: { type: 'string' } }, required: ['status'] } } },
    },
    async () => ({ status: 'ok' }),
  );
  await app.register(pickerRoutes, { mode: resolver.mode, replayUrl: deps.config.api.replayUrl, imageOrigin: deps.config.s3.endpoint });
  await app.register(meRoutes, { deps });
  await app.register(archiveRoutes, { deps });
  await app.register(archiveThumbnailRoutes, { deps });
  await app.register(archiveRequiresRoutes, { deps });
  // none of the crawl routes exist unless both webhook settings are set (loadConfig: both or
  // neither); main.ts connects Temporal exactly then
  if (deps.config.crawl.webhook !== undefined && deps.temporal !== undefined) {
    const crawls = deps.crawls ?? createCrawlService({ ...deps, temporal: deps.temporal });
    await app.register(crawlRoutes, { deps: { ...deps, crawls } });
    const levels = deps.levels ?? createCrawlLevelService({ ...deps, temporal: deps.temporal });
    await app.register(levelReportRoutes, { deps, levels });
    await app.register(crawlProgressRoutes, { deps, levels });
  }
  // what the rules decided: with the crawl routes; checking rules needs no crawl machinery at all
  if (deps.config.crawl.webhook !== undefined) await app.register(decisionRoutes, { deps });
  await app.register(crawlRulesRoutes, { deps });
  // full-text search exists only when CAPTURE_LEDGER_OPENSEARCH_URL is set (404 otherwise)
  if (deps.config.opensearch !== undefined) await app.register(searchRoutes, { deps });

  return app;
}
