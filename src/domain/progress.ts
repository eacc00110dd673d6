// A crawl's progress as GET /api/crawls/:id/progress answers it: what the ledger holds per level,
// merged with what the workflow knows while it runs (its phase, the re-dispatches, and the flow's
// latest heartbeat: per host, queue, in flight and next allowed start). Pure.
import type { CrawlProgress, CrawlState, StopReason } from './crawl.ts';
import type { HostProgress } from './contract.ts';

export interface LevelCounts {
  depth: number;
  /** pages the level holds that the cap did not cut */
  pages: number;
  captured: number;
  failed: number;
  skipped: number;
  pending: number;
  /** pages found for this level that maxPages left out */
  cut: number;
}

export interface LevelProgressView extends LevelCounts {
  /** pages handed to the flow (null: not dispatched, or the workflow could not be asked) */
  dispatched: number | null;
  redispatches: number;
  /** the flow's latest heartbeat for this level, while it works on it */
  heartbeat: { receivedAt: string; pagesTotal: number; pagesDone: number; pagesInFlight: number } | null;
}

export interface ProgressView {
  crawlId: string;
  state: CrawlState;
  stopReason: StopReason | null;
  failure: string | null;
  /** the workflow's phase; null when it was not asked (finished crawl) or could not be reached */
  phase: CrawlProgress['phase'] | null;
  /** the level being worked on (running) or the deepest one reached */
  depth: number | null;
  maxDepth: number;
  /** where the live part came from: the workflow's progress query, or the ledger alone */
  source: 'workflow' | 'ledger';
  levels: LevelProgressView[];
  /** per host, from the current level's latest heartbeat ([] without one) */
  hosts: HostProgress[];
}

export interface CrawlFacts {
  id: string;
  state: CrawlState;
  stopReason: StopReason | null;
  failure: string | null;
  maxDepth: number;
  depthReached: number | null;
}

export function progressView(crawl: CrawlFacts, ledger: readonly LevelCounts[], live: CrawlProgress | null): ProgressView {
  const depths = new Set<number>([...ledger.map((l) => l.depth), ...(live?.levels ?? []).map((l) => l.depth)]);
  const levels = [...depths]
    .sort((a, b) => a - b)
    .map((depth): LevelProgressView => {
      const counts = ledger.find((l) => l.depth === depth) ?? { depth, pages: 0, captured: 0, failed: 0, skipped: 0, pending: 0, cut: 0 };
      const summary = live?.levels.find((l) => l.depth === depth);
      const hb = summary?.heartbeat ?? null;
      return {
        ...counts,
        dispatched: summary?.dispatched ?? null,
        redispatches: summary?.redispatches ?? 0,
        heartbeat: hb === null ? null : { receivedAt: hb.receivedAt, pagesTotal: hb.pagesTotal, pagesDone: hb.pagesDone, pagesInFlight: hb.pagesInFlight },
      };
    });
  const running = crawl.state === 'running' && live !== null;
  const current = running ? live.levels.find((l) => l.depth === live.depth) : undefined;
  return {
    crawlId: crawl.id,
    state: crawl.state,
    stopReason: crawl.stopReason,
    failure: crawl.failure,
    phase: live?.phase ?? null,
    depth: running ? live.depth : crawl.depthReached,
    maxDepth: crawl.maxDepth,
    source: live === null ? 'ledger' : 'workflow',
    levels,
    hosts: running && live.phase === 'waiting' ? (current?.heartbeat?.hosts ?? []) : [],
  };
}

/** Hosts a heartbeat passes on to the workflow: every signal is kept in its history. */
export const MAX_SIGNALLED_HOSTS = 100;

/**
 * The hosts of a heartbeat worth keeping, at most `max`: those with something in flight, then
 * those with the longest queues; hosts with nothing left are dropped.
 */
export function busiestHosts(hosts: readonly HostProgress[], max = MAX_SIGNALLED_HOSTS): HostProgress[] {
  return hosts
    .filter((h) => h.inFlight > 0 || h.queued > 0)
    .map((h, i) => ({ h, i }))
    .sort((a, b) => b.h.inFlight - a.h.inFlight || b.h.queued - a.h.queued || a.i - b.i)
    .slice(0, max)
    .map(({ h }) => h);
}
