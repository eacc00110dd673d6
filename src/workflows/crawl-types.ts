// What the crawl workflow is started with and what it ends with.
import type { LevelSummary, StopReason } from '../domain/crawl.ts';

export interface CrawlWorkflowInput {
  crawlId: string;
  orgId: string;
  /** how long a dispatched level may go unreported before the crawl fails */
  levelTimeoutSeconds: number;
  /** dispatch attempts before the crawl fails (default 5, backing off from 1 s) */
  dispatchAttempts?: number;
  /** index the crawl into full-text search once it has finished (search configured) */
  index?: boolean;
  /** once a level has had a heartbeat, silence longer than this dispatches it again (default 60) */
  livenessWindowSeconds?: number;
  /** re-dispatches of a silent level before the crawl fails (default 3) */
  maxRedispatches?: number;
}

export interface CrawlWorkflowResult {
  crawlId: string;
  /** absent: there was no running row for this crawl, so nothing was done */
  state: 'succeeded' | 'failed' | 'absent';
  stopReason: StopReason | null;
  failure: string | null;
  levels: LevelSummary[];
}

/** How the crawl ended, as finishCrawl writes it to the row. */
export interface CrawlOutcome {
  state: 'succeeded' | 'failed';
  stopReason: StopReason;
  failure: string | null;
}
