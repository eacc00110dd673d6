// Every activity the worker registers, built from its dependencies. Workflows import the type
// only (proxyActivities<Activities>), never this module's code.
import { createCrawlActivities, type ActivityDeps as CrawlActivityDeps } from './crawl.ts';
import type { SearchIndex } from '../search/client.ts';
import { createIndexActivities } from './index-crawl.ts';
import { createReconcileActivities } from './reconcile.ts';

/** The worker's clients, made by its main.ts (or a test) and closed there. */
export interface ActivityDeps extends CrawlActivityDeps {
  /** present when search is configured (CAPTURE_LEDGER_OPENSEARCH_URL) */
  search?: SearchIndex;
}

export function createActivities(deps: ActivityDeps) {
  return {
    ...createCrawlActivities(deps),
    // indexCrawl / indexPending: no-ops unless CAPTURE_LEDGER_OPENSEARCH_URL is set
    ...createIndexActivities({ db: deps.db, s3: deps.s3, search: deps.search }),
    // reconcileCaptures: run by the `reconcile` workflow (schedule `reconcile`, daily)
    ...createReconcileActivities({ db: deps.db, s3: deps.s3, bucket: deps.config.s3.bucket }),
  };
}

export type Activities = ReturnType<typeof createActivities>;
