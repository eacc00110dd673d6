// Full-text search. Registered only when CAPTURE_LEDGER_OPENSEARCH_URL is set: without an index
// the capability is not there, and a 404 says exactly that.
//   POST /api/crawls/:id/index — index the crawl's unindexed archives (can_submit on its org, else 404)
//   GET  /api/search?q=        — OpenSearch ranks, then can_view (BatchCheck, in the index's order)
//                                drops the rest, reading on to fill the page; total is the index's raw count.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { BadRequestError } from '../errors.ts';
import { indexCrawl } from '../../search/indexer.ts';
import { MAX_RESULT_WINDOW, MAX_SEARCH_ROUNDS, searchForCaller } from '../../search/query.ts';
import { submittableCrawl } from '../crawl-access.ts';
import type { AppDeps } from '../deps.ts';
import { requireIdentity } from '../identity.ts';
import { errorResponses, NoBody, notFoundResponse, UuidParams } from '../schemas/common.ts';
import { DEFAULT_SEARCH_LIMIT, IndexResult, SearchAnswer, SearchQuery } from '../schemas/search.ts';
import { accepted } from '../accepted.ts';

export { DEFAULT_SEARCH_LIMIT, MAX_SEARCH_LIMIT } from '../schemas/search.ts';

const searchRoutes: FastifyPluginAsyncTypebox<{ deps: AppDeps }> = async (app, opts) => {
  const { db, fga, s3, search } = opts.deps;
  if (search === undefined) return;

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
    async (request, reply) => {
      const identity = requireIdentity(request);
      const id = request.params.id.toLowerCase();
      await submittableCrawl(db, fga, identity, id);
      const result = await indexCrawl(
        { db, s3, search, onFailure: (archiveId, err) => request.log.warn({ archiveId, crawlId: id, err: err.message }, 'archive not indexed') },
        id,
      );
      request.log.info({ crawlId: id, ...result }, 'indexed crawl');
      return accepted(reply, result);
    },
  );

  app.get(
    '/api/search',
    {
      schema: {
        summary: 'Full-text search over captured pages you may see',
        description: `Title and text of every indexed page (cjk bigrams, so Japanese works without word breaks). OpenSearch answers first and can_view filters its hits; when it drops most of them the search reads on (search_after, at most ${MAX_SEARCH_ROUNDS} reads) to fill the page, so a page holds fewer than \`limit\` hits only when no more visible ones were found in that reach. \`total\` is the index's raw count, including what authorization dropped. Continue with \`offset=nextOffset\`. Unknown query parameters are dropped.`,
        tags: ['search'],
        querystring: SearchQuery,
        response: { 200: SearchAnswer, ...errorResponses },
      },
    },
    async (request) => {
      const identity = requireIdentity(request);
      const { q, limit = DEFAULT_SEARCH_LIMIT, offset = 0 } = request.query;
      if (offset + limit > MAX_RESULT_WINDOW) {
        throw new BadRequestError('invalid request', {
          details: [{ field: 'querystring.offset', message: `offset + limit must be at most ${MAX_RESULT_WINDOW}` }],
        });
      }
      const { nextOffset, ...answer } = await searchForCaller({ db, fga, search }, identity, q, { size: limit, from: offset });
      request.log.debug({ returned: answer.hits.length, total: answer.total, nextOffset }, 'search');
      return nextOffset !== undefined && nextOffset < MAX_RESULT_WINDOW ? { ...answer, nextOffset } : answer;
    },
  );
};

export default searchRoutes;
