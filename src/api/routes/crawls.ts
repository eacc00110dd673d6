// The crawl routes (spec "Starting a crawl" … "Where it stops, and why"), registered only when
// both webhook settings are set. Each reads the request, calls the crawl service
// (services/crawls.ts: starting, the dead running row, the crawl's view) and replies.
//
// The capture flow's level report, bound to its dispatch rather than to a grant, is in
// level-reports.ts.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import Type from 'typebox';
import type { FastifySchemaValidationError } from 'fastify';
import { parseCursor } from '../../domain/cursor.ts';
import { seedSource } from '../../domain/crawl.ts';
import type { AppDeps } from '../deps.ts';
import { requireIdentity } from '../identity.ts';
import { errorResponses, notFoundResponse, UuidParams } from '../schemas/common.ts';
import { crawlConflict, CrawlListQuery, DEFAULT_CRAWL_PAGE, CrawlRequest, CrawlStarted, CrawlSummary, crawlUnavailable, CrawlView } from '../schemas/crawls.ts';
import { accepted } from '../accepted.ts';

/**
 * Only the body's oneOf (seeds xor fromTargets) failed: the spec's messages for "both" and
 * "neither" say which mistake it was (seedSource throws them), not ajv's "must match exactly one".
 */
function onlySourceRuleFailed(error: { validation?: FastifySchemaValidationError[] } | undefined): boolean {
  const errors = error?.validation ?? [];
  const outside = errors.filter((e) => !e.schemaPath.startsWith('#/oneOf/'));
  return outside.length === 1 && outside[0]!.keyword === 'oneOf' && outside[0]!.instancePath === '';
}

const crawlRoutes: FastifyPluginAsyncTypebox<{ deps: AppDeps }> = async (app, opts) => {
  const crawls = opts.deps.crawls;
  if (crawls === undefined) throw new Error('crawl routes need the crawl service (AppDeps.crawls)');

  app.post(
    '/api/crawls',
    {
      attachValidation: true,
      schema: {
        summary: 'Start a crawl',
        description:
          'Exactly one of seeds or fromTargets. 202 means accepted, not finished: GET /api/crawls/:id has the outcome. 409 means a crawl is already running. Capture formats and signing come from the configuration.',
        tags: ['crawls'],
        body: CrawlRequest,
        response: { 202: CrawlStarted, ...errorResponses, ...notFoundResponse, ...crawlConflict, ...crawlUnavailable },
      },
    },
    async (request, reply) => {
      const identity = requireIdentity(request);
      if (request.validationError !== undefined) {
        if (onlySourceRuleFailed(request.validationError)) seedSource(request.body);
        throw request.validationError;
      }
      const started = await crawls.start(identity, request.body, request.log);
      return accepted(reply, started);
    },
  );

  app.get(
    '/api/crawls',
    {
      schema: {
        summary: 'Crawls, newest first',
        description:
          'Gated on can_submit on your first organization: without it the answer is an empty array, not 403 or 404. Every row carries its orgId. Pass the startedAt of the last row as `before` for the next page, and its id as `beforeId` so crawls that share that startedAt are not skipped. Unknown query parameters are dropped.',
        tags: ['crawls'],
        querystring: CrawlListQuery,
        response: { 200: Type.Array(CrawlSummary), ...errorResponses },
      },
    },
    async (request) => {
      const { state, limit = DEFAULT_CRAWL_PAGE } = request.query;
      return crawls.list(requireIdentity(request), { state, cursor: parseCursor(request.query), limit });
    },
  );

  app.get(
    '/api/crawls/:id',
    {
      schema: {
        summary: 'One crawl: its state, why it stopped, and what it took',
        description:
          'pagesDiscovered counts every page the crawl recorded and every link the rules skipped; the difference to pagesCaptured is what failures, rules, robots and the caps threw away. 404 unless you may submit for its organization.',
        tags: ['crawls'],
        params: UuidParams,
        response: { 200: CrawlView, ...errorResponses, ...notFoundResponse },
      },
    },
    async (request) => crawls.view(requireIdentity(request), request.params.id),
  );
};

export default crawlRoutes;
