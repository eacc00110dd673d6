// indexPending: run by the `search-index` schedule (created by the worker only when search is
// configured). Indexes every archive whose indexed_at is NULL — new ones a finished crawl could
// not index, and all of them after `UPDATE archives SET indexed_at = NULL`, so that statement is
// the whole rebuild.
import { proxyActivities } from '@temporalio/workflow';
import type { Activities } from '../activities/index.ts';
import type { IndexResult } from '../search/indexer.ts';

export async function indexPending(): Promise<IndexResult> {
  const activities = proxyActivities<Activities>({
    startToCloseTimeout: '30 minutes',
    retry: { initialInterval: '5 seconds', backoffCoefficient: 2, maximumInterval: '1 minute', maximumAttempts: 3 },
  });
  return activities.indexPending();
}
