// Full-text search. Registered only when CAPTURE_LEDGER_OPENSEARCH_URL is set: without an index
// the capability is not there, and a 404 says exactly that.
//   POST /api/crawls/:id/index — index the crawl's unindexed archives (can_submit on its org, else 404)
//   GET  /api/search?q=        — OpenSearch ranks, then can_view (BatchCheck, in the index's order)
//                                drops the rest, reading on to fill the page; total is the index's raw count.
// The work is the search service's (services/search.ts); the handlers read, call and reply.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { MAX_SEARCH_ROUNDS } from '../../search/query.ts';
import type { AppDeps } from '../deps.ts';
import { requireIdentity } from '../identity.ts';
import { errorResponses, NoBody, notFoundResponse, UuidParams } from '../schemas/common.ts';
import { IndexResult, SearchAnswer, SearchQuery } from '../schemas/search.ts';
import { createSearchService } from '../services/search.ts';
import { accepted } from '../accepted.ts';

const SEARCH_DESCRIPTION = [
  'Title and text of every indexed page (cjk bigrams, so Japanese works without word breaks).',
  `OpenSearch answers first and can_view filters its hits; when it drops most of them the search reads on (search_after, at most ${MAX_SEARCH_ROUNDS} reads) to fill the page,`,
  'so a page holds fewer than `limit` hits only when no more visible ones were found in that reach.',
  "`total` is the index's raw count, including what authorization dropped. Continue with `offset=nextOffset`. Unknown query parameters are dropped.",
].join(' ');

const searchRoutes: FastifyPluginAsyncTypebox<{ deps: AppDeps }> = async (app, opts) => {
  const { db, fga, s3, search } = opts.deps;
  if (search === undefined) return;
  const service = createSearchService({ db, fga, s3, search });

  app.post(
    '/api/crawls/:id/index',
    {
      schema: {
        summary: "Index one crawl's archives for full-text search",
        description:
          "Reads pages/pages.jsonl out of each of the crawl's unindexed WACZ (ranged reads) and indexes title and text as written. Needs can_submit on the crawl's organization; an unknown crawl and one you may not index give the same 404. The crawl workflow runs the same work when a crawl finishes.",
        tags: ['search'],
        params: UuidParams,
        body: NoBody,
        response: {
          202: IndexResult,
          ...errorResponses,
          ...notFoundResponse,
        },
      },
    },
    async (request, reply) => accepted(reply, await service.indexCrawl(requireIdentity(request), request.params.id, request.log)),
  );

  app.get(
    '/api/search',
    {
      schema: {
        summary: 'Full-text search over captured pages you may see',
        description: SEARCH_DESCRIPTION,
        tags: ['search'],
        querystring: SearchQuery,
        response: { 200: SearchAnswer, ...errorResponses },
      },
    },
    async (request) => service.search(requireIdentity(request), request.query, request.log),
  );
};

export default searchRoutes;
