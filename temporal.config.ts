// Names shared by the API, the worker and operators' commands. Addresses come from the config.
export const TASK_QUEUE = 'capture-ledger';
export const CRAWL_WORKFLOW = 'crawl';
export const RECONCILE_WORKFLOW = 'reconcile';
export const OUTBOX_DRAIN_WORKFLOW = 'outboxDrain';
export const INDEX_PENDING_WORKFLOW = 'indexPending';

export const crawlWorkflowId = (crawlId: string): string => `crawl-${crawlId}`;

/** Error types activities throw as final, and the workflow's retry policies do not retry. */
export const NON_RETRYABLE = {
  dispatchRejected: 'DispatchRejected',
  noCrawl: 'NoCrawl',
  admission: 'AdmissionError',
  /** admitLevel was given a report the level's newer report replaced: the workflow waits for that one */
  staleReport: 'StaleReport',
} as const;

export const SCHEDULES = {
  reconcile: { id: 'reconcile', cron: '17 3 * * *' },
  outboxDrain: { id: 'outbox-drain', every: '1m' },
  searchIndex: { id: 'search-index', every: '10m' },
} as const;

/** Registered on the dev server by `npm run stack:up` so the Web UI can filter crawls. */
export const SEARCH_ATTRIBUTES = {
  CrawlId: 'Keyword',
  CrawlOrg: 'Keyword',
  CrawlState: 'Keyword',
} as const;
