// Full-text search. Registered only when CAPTURE_LEDGER_OPENSEARCH_URL is set: without an index
// the capability is not there, and a 404 says exactly that.
//   POST /api/crawls/:id/index — index the crawl's unindexed archives (can_submit on its org, else 404)
//   GET  /api/search?q=        — OpenSearch first, then can_view (one BatchCheck per read) drops the
//                                rest, reading on to fill the page; total is the index's raw count.
import type { FastifyInstance } from 'fastify';
import { BadRequestError } from '../../domain/errors.ts';
import { indexCrawl } from '../../search/indexer.ts';
import { MAX_RESULT_WINDOW, MAX_SEARCH_ROUNDS, searchForCaller } from '../../search/query.ts';
import { submittableCrawl } from '../crawl-access.ts';
import type { AppDeps } from '../deps.ts';
import { requireIdentity } from '../identity.ts';
import { errorResponses, notFoundResponse } from '../schemas.ts';

export const DEFAULT_SEARCH_LIMIT = 20;
export const MAX_SEARCH_LIMIT = 100;

/**
 * No body, or an empty object: `curl -X POST …/index` sends none at all, and fastify validates a
 * missing body as null. Anything else (a key, a string, an array) is a 400.
 */
const noBodyOrEmpty = { anyOf: [{ type: 'null' }, { type: 'object', additionalProperties: false, maxProperties: 0 }] } as const;

const UUID_PATTERN = '^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$';

export const searchHitSchema = {
  type: 'object',
  properties: {
    archiveId: { type: 'string', format: 'uuid' },
    objectKey: { type: 'string' },
    url: { type: 'string' },
    title: { type: 'string', description: 'as pages/pages.jsonl has it; absent when the page line has none' },
    textWithheld: { type: 'string', description: "BrowserHive's DocumentWithheld (url-policy, content-type, no-archive, deny, unattributed): the body was not kept. Absent when the text is simply what was captured, even if empty" },
    capturedAt: { type: 'string', format: 'date-time' },
    ts: { type: 'string', description: "the page line's own timestamp" },
    score: { type: 'number' },
    snippet: { type: 'string', description: 'plain text around the match, when the text matched' },
  },
  required: ['archiveId', 'objectKey', 'url', 'capturedAt', 'score'],
  additionalProperties: false,
} as const;

export default async function searchRoutes(app: FastifyInstance, opts: { deps: AppDeps }): Promise<void> {
  const { db, fga, s3, search } = opts.deps;
  if (search === undefined) return;

  app.post<{ Params: { id: string } }>(
    '/api/crawls/:id/index',
    {
      schema: {
        summary: "Index one crawl's archives for full-text search",
        description:
          "Reads pages/pages.jsonl out of each of the crawl's unindexed WACZ (ranged reads) and indexes title and text as written. Needs can_submit on the crawl's organization; an unknown crawl and one you may not index give the same 404. The crawl workflow runs the same work when a crawl finishes.",
        tags: ['search'],
        params: {
          type: 'object',
          properties: { id: { type: 'string', format: 'uuid', pattern: UUID_PATTERN } },
          required: ['id'],
          additionalProperties: false,
        },
        body: noBodyOrEmpty,
        response: {
          202: {
            type: 'object',
            properties: {
              indexed: { type: 'integer', description: 'archives indexed by this call' },
              pages: { type: 'integer', description: 'pages indexed from them' },
              failed: { type: 'integer', description: 'archives that could not be read or indexed; they stay unindexed and are tried again next time' },
            },
            required: ['indexed', 'pages', 'failed'],
            additionalProperties: false,
          },
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
      void reply.code(202);
      return result;
    },
  );

  app.get<{ Querystring: { q: string; limit: number; offset: number } }>(
    '/api/search',
    {
      schema: {
        summary: 'Full-text search over captured pages you may see',
        description:
          `Title and text of every indexed page (cjk bigrams, so Japanese works without word breaks). OpenSearch answers first and can_view filters its hits; when it drops most of them the search reads on (search_after, at most ${MAX_SEARCH_ROUNDS} reads) to fill the page, so a page holds fewer than \`limit\` hits only when no more visible ones were found in that reach. \`total\` is the index's raw count, including what authorization dropped. Continue with \`offset=nextOffset\`. Unknown query parameters are dropped.`,
        tags: ['search'],
        querystring: {
          type: 'object',
          properties: {
            q: { type: 'string', minLength: 1, maxLength: 1000, pattern: '\\S' },
            limit: { type: 'integer', minimum: 1, maximum: MAX_SEARCH_LIMIT, default: DEFAULT_SEARCH_LIMIT },
            offset: { type: 'integer', minimum: 0, maximum: MAX_RESULT_WINDOW - 1, default: 0 },
          },
          required: ['q'],
          additionalProperties: false,
        },
        response: {
          200: {
            type: 'object',
            properties: {
              hits: { type: 'array', items: searchHitSchema },
              total: { type: 'integer', description: "the index's raw count of matching pages, before authorization" },
              nextOffset: {
                type: 'integer',
                description: `pass as offset for the next page (a position in the index's own order, past every hit this page read); absent when no hit is left, or when it would pass ${MAX_RESULT_WINDOW}`,
              },
            },
            required: ['hits', 'total'],
            additionalProperties: false,
          },
          ...errorResponses,
        },
      },
    },
    async (request) => {
      const identity = requireIdentity(request);
      const { q, limit, offset } = request.query;
      if (offset + limit > MAX_RESULT_WINDOW) {
        throw new BadRequestError('invalid request', { details: [{ field: 'querystring.offset', message: `offset + limit must be at most ${MAX_RESULT_WINDOW}` }] });
      }
      const { nextOffset, ...answer } = await searchForCaller({ db, fga, search }, identity, q, { size: limit, from: offset });
      request.log.debug({ returned: answer.hits.length, total: answer.total, nextOffset }, 'search');
      return nextOffset !== undefined && nextOffset < MAX_RESULT_WINDOW ? { ...answer, nextOffset } : answer;
    },
  );
}
