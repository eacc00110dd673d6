// Full-text search for the API (routes/search.ts reads the request, calls this, replies):
// indexing one crawl for a caller who may submit to its organization, and a caller's search,
// bounded by the index's result window.
import type { OpenFgaClient } from '@openfga/sdk';
import type { S3Client } from '@aws-sdk/client-s3';
import type { FastifyBaseLogger } from 'fastify';
import type { Static } from 'typebox';
import type { Db } from '../../db/connect.ts';
import { BadRequestError } from '../errors.ts';
import type { Identity } from '../../domain/identity.ts';
import { searchForCaller } from '../../search/caller-search.ts';
import type { SearchIndex } from '../../search/client.ts';
import { indexCrawl, type IndexResult } from '../../search/indexer.ts';
import { MAX_RESULT_WINDOW } from '../../search/query.ts';
import { submittableCrawl } from '../crawl-access.ts';
import { DEFAULT_SEARCH_LIMIT, type SearchAnswer, type SearchQuery } from '../schemas/search.ts';

export interface SearchServiceDeps {
  db: Db;
  fga: OpenFgaClient;
  s3: S3Client;
  search: SearchIndex;
}

export interface SearchService {
  /** indexes the crawl's unindexed archives; the same 404 for an unknown crawl and one the caller may not index */
  indexCrawl(identity: Identity, crawlId: string, log: FastifyBaseLogger): Promise<IndexResult>;
  search(identity: Identity, query: Static<typeof SearchQuery>, log: FastifyBaseLogger): Promise<Static<typeof SearchAnswer>>;
}

export function createSearchService(deps: SearchServiceDeps): SearchService {
  const { db, fga, s3, search } = deps;
  return {
    async indexCrawl(identity, crawlId, log) {
      const id = crawlId.toLowerCase();
      await submittableCrawl(db, fga, identity, id);
      const onFailure = (archiveId: string, err: Error): void => log.warn({ archiveId, crawlId: id, err: err.message }, 'archive not indexed');
      const result = await indexCrawl({ db, s3, search, onFailure }, id);
      log.info({ crawlId: id, ...result }, 'indexed crawl');
      return result;
    },

    async search(identity, query, log) {
      const { q, limit = DEFAULT_SEARCH_LIMIT, offset = 0 } = query;
      if (offset + limit > MAX_RESULT_WINDOW) {
        throw new BadRequestError('invalid request', {
          details: [{ field: 'querystring.offset', message: `offset + limit must be at most ${MAX_RESULT_WINDOW}` }],
        });
      }
      const { nextOffset, ...answer } = await searchForCaller({ db, fga, search }, identity, q, { size: limit, from: offset });
      log.debug({ returned: answer.hits.length, total: answer.total, nextOffset }, 'search');
      return nextOffset !== undefined && nextOffset < MAX_RESULT_WINDOW ? { ...answer, nextOffset } : answer;
    },
  };
}
