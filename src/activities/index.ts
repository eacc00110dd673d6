// Every activity the worker registers, built from its dependencies. Workflows import the type
// only (proxyActivities<Activities>), never this module's code.
import { createCrawlActivities, type ActivityDeps } from './crawl.ts';
import { createSearchIndex } from '../search/client.ts';
import { createIndexActivities } from './index-crawl.ts';
import { createReconcileActivities } from './reconcile.ts';

export type { ActivityDeps } from './crawl.ts';

export function createActivities(deps: ActivityDeps) {
  return {
    ...createCrawlActivities(deps),
    // indexCrawl / indexPending: no-ops unless CAPTURE_LEDGER_OPENSEARCH_URL is set
    ...createIndexActivities({ db: deps.db, s3: deps.s3, search: deps.config.opensearch === undefined ? undefined : createSearchIndex(deps.config.opensearch) }),
    // reconcileCaptures: run by the `reconcile` workflow (schedule `reconcile`, daily)
    ...createReconcileActivities({ db: deps.db, s3: deps.s3, bucket: deps.config.s3.bucket }),
  };
}

export type Activities = ReturnType<typeof createActivities>;
