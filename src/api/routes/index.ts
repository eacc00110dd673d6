// The routes, in one place: one plain fastify plugin per group, each given the services it calls.
import type { FastifyInstance } from 'fastify';
import type { AppDeps } from '../deps.ts';
import type { IdentityResolver } from '../identity.ts';
import { pickerRoutes } from '../picker.ts';
import { NoQuery } from '../schemas/common.ts';
import type { AppServices } from '../services/index.ts';
import archiveRequiresRoutes from './archive-requires.ts';
import archiveRoutes from './archives.ts';
import archiveThumbnailRoutes from './archive-thumbnail.ts';
import crawlProgressRoutes from './crawl-progress.ts';
import crawlRulesRoutes from './crawl-rules.ts';
import crawlRoutes from './crawls.ts';
import decisionRoutes from './decisions.ts';
import levelReportRoutes from './level-reports.ts';
import meRoutes from './me.ts';
import searchRoutes from './search.ts';

async function registerServiceRoutes(app: FastifyInstance, resolver: IdentityResolver, deps: AppDeps): Promise<void> {
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
}

export async function registerRoutes(app: FastifyInstance, opts: { deps: AppDeps; services: AppServices; resolver: IdentityResolver }): Promise<void> {
  const { deps, services } = opts;
  await registerServiceRoutes(app, opts.resolver, deps);
  await app.register(meRoutes, { me: services.me });
  await app.register(archiveRoutes, { archives: services.archives });
  await app.register(archiveThumbnailRoutes, { archives: services.archives });
  await app.register(archiveRequiresRoutes, { archives: services.archives });
  // none of the crawl routes exist unless both webhook settings are set (loadConfig: both or
  // neither); main.ts connects Temporal exactly then
  if (deps.config.crawl.webhook !== undefined && services.crawls !== undefined && services.levels !== undefined) {
    await app.register(crawlRoutes, { deps: { ...deps, crawls: services.crawls } });
    await app.register(levelReportRoutes, { deps, levels: services.levels });
    await app.register(crawlProgressRoutes, { deps, levels: services.levels });
  }
  // what the rules decided: with the crawl routes; checking rules needs no crawl machinery at all
  if (deps.config.crawl.webhook !== undefined) await app.register(decisionRoutes, { decisions: services.decisions });
  await app.register(crawlRulesRoutes, { deps });
  // full-text search exists only when CAPTURE_LEDGER_OPENSEARCH_URL is set (404 otherwise)
  if (deps.config.opensearch !== undefined) await app.register(searchRoutes, { deps });
}
