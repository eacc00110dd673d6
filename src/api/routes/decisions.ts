// What the rules decided (spec "What the rules decided"), answered by services/decisions.ts.
// Registered with the crawl routes, i.e. only when the crawl webhook is configured.
//   GET /api/crawls/:id/decisions — one crawl: its rules as fixed, its per-depth decisions, and the
//     pages robots.txt kept out. Same authorization as GET /api/crawls/:id: can_submit on the
//     crawl's organization at HIGHER_CONSISTENCY, 404 otherwise.
//   GET /api/decisions?domain=&days=90&action=skip — across crawls, for a host and its subdomains
//     at a label boundary, newest crawl first, cut at 500 rows. Only crawls of organizations the
//     caller may submit for (asked once per distinct organization, before the cut).
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { requireIdentity } from '../identity.ts';
import { errorResponses, notFoundResponse, UuidParams } from '../schemas/common.ts';
import { AcrossCrawls, CrawlDecisions, DEFAULT_DAYS, DecisionsQuery, MAX_DECISION_ROWS } from '../schemas/decisions.ts';
import type { DecisionService } from '../services/decisions.ts';

const decisionRoutes: FastifyPluginAsyncTypebox<{ decisions: DecisionService }> = async (app, { decisions }) => {
  app.get(
    '/api/crawls/:id/decisions',
    {
      schema: {
        summary: 'What the rules of one crawl decided, per depth, rule and host name',
        description: 'Also lists the pages robots.txt kept out. Requires can_submit on the crawl’s organization; otherwise 404.',
        tags: ['crawls'],
        params: UuidParams,
        response: { 200: CrawlDecisions, ...errorResponses, ...notFoundResponse },
      },
    },
    async (request) => decisions.forCrawl(requireIdentity(request), request.params.id.toLowerCase()),
  );

  app.get(
    '/api/decisions',
    {
      schema: {
        summary: 'Decisions across crawls for a host name and its subdomains',
        description:
          `Newest crawl first; crawls started in the last \`days\` days (default ${DEFAULT_DAYS}); \`action\` defaults to skip. ` +
          `Cut at ${MAX_DECISION_ROWS} rows (truncated: true). Only crawls of organizations you may submit for.`,
        tags: ['crawls'],
        querystring: DecisionsQuery,
        response: { 200: AcrossCrawls, ...errorResponses },
      },
    },
    async (request) => decisions.across(requireIdentity(request), request.query),
  );
};

export default decisionRoutes;
