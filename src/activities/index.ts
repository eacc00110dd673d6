// Every activity the worker registers, built from its dependencies. Workflows import the type
// only (proxyActivities<Activities>), never this module's code.
import { createCrawlActivities, type ActivityDeps } from './crawl.ts';

export type { ActivityDeps } from './crawl.ts';

export function createActivities(deps: ActivityDeps) {
  return {
    ...createCrawlActivities(deps),
  };
}

export type Activities = ReturnType<typeof createActivities>;
