// The indexing activity the crawl workflow runs when a crawl finishes and search is configured
// (the same work POST /api/crawls/:id/index does). Idempotent: it picks only archives whose
// indexed_at is NULL and writes documents under deterministic ids, so a retry re-does at most
// the archives that were not marked. An archive that cannot be indexed is marked with its reason
// (archives.index_error) and skipped, so one such archive never fails the activity.
import type { S3Client } from '@aws-sdk/client-s3';
import { log } from '@temporalio/activity';
import type { Db } from '../db/connect.ts';
import type { SearchIndex } from '../search/client.ts';
import { indexCrawl as indexCrawlArchives, indexPending as indexPendingArchives, type IndexResult } from '../search/indexer.ts';

export interface IndexActivityDeps {
  db: Db;
  s3: S3Client;
  /** undefined when CAPTURE_LEDGER_OPENSEARCH_URL is unset: the activities then do nothing */
  search: SearchIndex | undefined;
}

const NOTHING: IndexResult = { indexed: 0, pages: 0, failed: 0 };

function warnNotIndexed(archiveId: string, error: Error, marked: boolean): void {
  const outcome = marked
    ? 'archive cannot be indexed; its index_error says why and it is passed over until a rebuild'
    : 'archive not indexed; it stays unindexed and is tried again next time';
  try {
    log.warn(outcome, { archiveId, error: error.message });
  } catch {
    // outside an activity context (a direct call)
    console.warn(`archive ${archiveId}: ${outcome}: ${error.message}`);
  }
}

export function createIndexActivities(deps: IndexActivityDeps) {
  return {
    /** Indexes the crawl's archives that are not indexed yet (archives.task_id = crawl_pages.task_id). */
    async indexCrawl(crawlId: string): Promise<IndexResult> {
      if (deps.search === undefined) return NOTHING;
      return indexCrawlArchives({ db: deps.db, s3: deps.s3, search: deps.search, onFailure: warnNotIndexed }, crawlId);
    },
    /** Indexes every archive with indexed_at NULL: run after `UPDATE archives SET indexed_at = NULL`. */
    async indexPending(): Promise<IndexResult> {
      if (deps.search === undefined) return NOTHING;
      return indexPendingArchives({ db: deps.db, s3: deps.s3, search: deps.search, onFailure: warnNotIndexed });
    },
  };
}
