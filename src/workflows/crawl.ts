// The crawl workflow: one per crawl, id crawl-<crawlId> (design.md "Temporal").
//
//   dispatchLevel → wait for levelReported (durable timer: a level never reported fails the
//   crawl) → admitLevel → next level, or stop with completed / max_depth /
//   max_pages / failed → finishCrawl.
//
// Whatever happens — a dispatch that keeps failing, a lost level, an admission that cannot be
// done, a cancel signal, the workflow itself being cancelled — the row is finished, so a dead
// crawl never blocks the next one. The row is the outcome; this workflow only drives it.
//
// Deterministic: no I/O here, activities imported as types only.
import {
  allHandlersFinished,
  CancellationScope,
  condition,
  defineQuery,
  defineSignal,
  isCancellation,
  log,
  patched,
  proxyActivities,
  setHandler,
  upsertSearchAttributes,
} from '@temporalio/workflow';
import type { Activities } from '../activities/index.ts';
import type { AdmitLevelResult } from '../ledger/admit-level.ts';
import { decideAfterLevel, type CrawlProgress, type LevelSummary, type StopReason } from '../domain/crawl.ts';
import { CRAWL_STATE_KEY } from '../temporal/search-attributes.ts';
import { NON_RETRYABLE, QUERIES, SIGNALS } from '../../temporal.config.ts';
import { beat, LIVENESS_DEFAULTS, nextExpiry, onWaitEnded, redispatched, watchFrom, type LevelHeartbeat, type LevelWatch } from '../domain/liveness.ts';
import { ReportQueue, type LevelReported } from './report-queue.ts';

export type { LevelReported } from './report-queue.ts';

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

export interface ReportRefused {
  depth: number;
  reason: string;
}

export interface CrawlWorkflowResult {
  crawlId: string;
  /** absent: there was no running row for this crawl, so nothing was done */
  state: 'succeeded' | 'failed' | 'absent';
  stopReason: StopReason | null;
  failure: string | null;
  levels: LevelSummary[];
}

export const levelReportedSignal = defineSignal<[LevelReported]>(SIGNALS.levelReported);
export const cancelSignal = defineSignal<[{ reason?: string }?]>(SIGNALS.cancel);
export const levelHeartbeatSignal = defineSignal<[LevelHeartbeat]>(SIGNALS.levelHeartbeat);
/** A report carried the level's capability but the API refused its token: no report will come. */
export const reportRefusedSignal = defineSignal<[ReportRefused]>(SIGNALS.reportRefused);
export const progressQuery = defineQuery<CrawlProgress>(QUERIES.progress);

const NON_RETRYABLE_TYPES = Object.values(NON_RETRYABLE);

/** The message of an activity failure's root cause, for crawls.failure. */
function describe(err: unknown): string {
  let e = err as { message?: string; cause?: unknown } | undefined;
  const parts: string[] = [];
  for (let i = 0; e !== undefined && e !== null && i < 4; i += 1) {
    if (e.message) parts.push(e.message);
    e = e.cause as typeof e;
  }
  return (parts[parts.length - 1] ?? String(err)).slice(0, 1000);
}

export async function crawl(input: CrawlWorkflowInput): Promise<CrawlWorkflowResult> {
  const { crawlId } = input;

  const control = proxyActivities<Activities>({
    startToCloseTimeout: '1 minute',
    retry: { initialInterval: '1 second', maximumInterval: '30 seconds' },
  });
  const { dispatchLevel } = proxyActivities<Activities>({
    startToCloseTimeout: '1 minute',
    retry: {
      initialInterval: '1 second',
      backoffCoefficient: 2,
      maximumInterval: '30 seconds',
      maximumAttempts: input.dispatchAttempts ?? 5,
      nonRetryableErrorTypes: NON_RETRYABLE_TYPES,
    },
  });
  const { admitLevel } = proxyActivities<Activities>({
    startToCloseTimeout: '10 minutes',
    retry: {
      initialInterval: '1 second',
      backoffCoefficient: 2,
      maximumInterval: '1 minute',
      maximumAttempts: 10,
      nonRetryableErrorTypes: NON_RETRYABLE_TYPES,
    },
  });
  const { deliverTuples } = proxyActivities<Activities>({
    startToCloseTimeout: '2 minutes',
    retry: { initialInterval: '1 second', maximumAttempts: 3 },
  });

  const progress: CrawlProgress = {
    crawlId,
    phase: 'starting',
    depth: 0,
    maxDepth: 0,
    cancelRequested: false,
    levels: [],
    stopReason: null,
    failure: null,
  };
  let cancelReason: string | undefined;
  const reports = new ReportQueue();
  /** when the current level last had a heartbeat (workflow time); other levels' are ignored */
  let lastBeat: { depth: number; at: number } | undefined;

  setHandler(levelReportedSignal, (s) => {
    reports.offer(s);
  });
  setHandler(levelHeartbeatSignal, (hb) => {
    // the flow may beat before dispatchLevel has even returned
    if (hb.depth !== progress.depth || (progress.phase !== 'dispatching' && progress.phase !== 'waiting')) return;
    lastBeat = { depth: hb.depth, at: Date.now() };
    summary(hb.depth).heartbeat = hb;
  });
  // Stops the crawl as a cancel does (cancelRequested is what every wait watches), with its own failure.
  let refusal: string | undefined;
  setHandler(reportRefusedSignal, (r) => {
    refusal ??= `level ${r.depth} report refused: ${r.reason}`.slice(0, 1000);
    progress.cancelRequested = true;
  });
  setHandler(cancelSignal, (arg) => {
    progress.cancelRequested = true;
    cancelReason = arg?.reason;
  });
  setHandler(progressQuery, () => progress);

  const hasReport = (depth: number): boolean => reports.has(depth);
  /** Takes every queued report of `depth`; the newest is what the store holds and what is admitted. */
  const takeReports = (depth: number): LevelReported | undefined => reports.take(depth);
  const summary = (depth: number): LevelSummary => {
    let s = progress.levels.find((l) => l.depth === depth);
    if (s === undefined) {
      s = { depth, dispatched: 0, reportId: null, captured: 0, failed: 0, skipped: 0, archives: 0, nextLevelPages: 0, cutPages: 0 };
      progress.levels.push(s);
    }
    return s;
  };
  const record = (r: AdmitLevelResult): void => {
    Object.assign(summary(r.depth), {
      reportId: r.reportId,
      captured: r.captured,
      failed: r.failed,
      skipped: r.skipped,
      archives: r.archives,
      ...(r.expanded ? { nextLevelPages: r.nextLevelPages, cutPages: r.cutPages } : {}),
    });
  };
  /** Re-reports of levels whose next level is already out: correct the ledger, leave the frontier. */
  const readmitEarlier = async (current: number): Promise<void> => {
    for (const depth of reports.earlierDepths(current)) {
      const r = takeReports(depth);
      if (r !== undefined) record(await admitLevel({ crawlId, depth, reportId: r.reportId, expand: false }));
    }
  };
  const liveness = {
    levelTimeoutMs: input.levelTimeoutSeconds * 1000,
    windowMs: (input.livenessWindowSeconds ?? LIVENESS_DEFAULTS.windowSeconds) * 1000,
    maxRedispatches: input.maxRedispatches ?? LIVENESS_DEFAULTS.maxRedispatches,
  };
  /**
   * Waits for the level's report (or a cancel). Returns the crawl's failure when it cannot come:
   * the level timeout passed, or the flow went quiet and re-dispatching did not bring it back.
   */
  const waitForReport = async (depth: number): Promise<string | undefined> => {
    const beatAt = (): number | undefined => (lastBeat?.depth === depth ? lastBeat.at : undefined);
    let watch: LevelWatch = watchFrom(Date.now());
    for (;;) {
      const heard = beatAt();
      if (heard !== undefined) watch = beat(watch, heard);
      const { at } = nextExpiry(watch, liveness);
      // before the first heartbeat the timer is the level timeout: the first one shortens it
      const woke = await condition(
        () => progress.cancelRequested || hasReport(depth) || (heard === undefined && beatAt() !== undefined),
        Math.max(1, at - Date.now()),
      );
      if (progress.cancelRequested || hasReport(depth)) return undefined;
      if (woke) continue;
      const latest = beatAt();
      if (latest !== undefined) watch = beat(watch, latest);
      const step = onWaitEnded(watch, liveness, Date.now(), depth);
      if (step.kind === 'fail') return step.failure;
      if (step.kind === 'redispatch') {
        watch = redispatched(watch, Date.now());
        Object.assign(summary(depth), { redispatches: watch.redispatches, heartbeat: null });
        log.warn('no heartbeat from the capture flow; dispatching the level again', { crawlId, depth, redispatches: watch.redispatches });
        try {
          await dispatchLevel({ crawlId, depth, levelTimeoutSeconds: input.levelTimeoutSeconds });
        } catch (err) {
          // the flow may still be coming back: this counted as a re-dispatch, the window runs again
          log.warn('re-dispatch failed', { crawlId, depth, error: describe(err) });
        }
      }
    }
  };
  const deliver = async (): Promise<void> => {
    // Delivery left the workflow: the worker's outbox wake drains as each write commits
    // (src/worker/outbox-wake.ts). Histories recorded before the patch still deliver here.
    if (patched('outbox-leaves-crawl')) return;
    try {
      await deliverTuples();
    } catch (err) {
      // The tuples stay queued; the outbox-drain schedule delivers them. Not a reason to fail.
      log.warn('tuple delivery deferred to the outbox-drain schedule', { crawlId, error: describe(err) });
    }
  };

  let outcome: { state: 'succeeded' | 'failed'; stopReason: StopReason; failure: string | null };
  try {
    const begin = await control.beginCrawl({ crawlId });
    if (!begin.running) {
      // No running row: the API's transaction never committed, or the row was already finished.
      // Nothing to drive, nothing to finish.
      log.warn('no running crawl row; exiting', { crawlId });
      progress.phase = 'done';
      await condition(allHandlersFinished);
      return { crawlId, state: 'absent', stopReason: null, failure: null, levels: [] };
    }
    progress.maxDepth = begin.maxDepth;

    let depth = 0;
    let truncated = false;
    for (;;) {
      progress.depth = depth;
      progress.phase = 'dispatching';
      const dispatched = await dispatchLevel({ crawlId, depth, levelTimeoutSeconds: input.levelTimeoutSeconds });
      summary(depth).dispatched = dispatched.pages;
      // the capture_job tuples queued with the row: deliver them while the flow works
      if (depth === 0) await deliver();

      progress.phase = 'waiting';
      const lost = await waitForReport(depth);
      if (progress.cancelRequested) {
        outcome = { state: 'failed', stopReason: 'failed', failure: refusal ?? `cancelled${cancelReason ? `: ${cancelReason}` : ''}` };
        break;
      }
      if (lost !== undefined) {
        outcome = { state: 'failed', stopReason: 'failed', failure: lost };
        break;
      }

      progress.phase = 'admitting';
      let result: AdmitLevelResult | undefined;
      // Re-reports are capped by the API; besides, none is admitted once the level's deadline has
      // passed, so a flow reporting again and again cannot keep the crawl running.
      const pastDeadline = (): boolean => Date.now() >= (dispatched.deadline ?? Infinity);
      do {
        // A report of this level arriving again before the next level goes out replaces it.
        for (let r = takeReports(depth); r !== undefined; r = pastDeadline() ? undefined : takeReports(depth)) {
          result = await admitLevel({ crawlId, depth, reportId: r.reportId, expand: true });
          record(result);
        }
        await readmitEarlier(depth);
        await deliver();
      } while (hasReport(depth) && !pastDeadline());
      if (progress.cancelRequested) {
        outcome = { state: 'failed', stopReason: 'failed', failure: refusal ?? `cancelled${cancelReason ? `: ${cancelReason}` : ''}` };
        break;
      }

      const step = decideAfterLevel({
        depth,
        maxDepth: begin.maxDepth,
        nextLevelPages: result!.nextLevelPages,
        cutPages: result!.cutPages,
        truncated,
        cutSoFar: result!.cutSoFar,
      });
      truncated = truncated || result!.cutPages > 0;
      if (step.kind === 'stop') {
        outcome = { state: 'succeeded', stopReason: step.reason, failure: null };
        break;
      }
      depth = step.depth;
    }
  } catch (err) {
    outcome = { state: 'failed', stopReason: 'failed', failure: isCancellation(err) ? 'workflow cancelled' : describe(err) };
    log.error('crawl failed', { crawlId, failure: outcome.failure });
  }

  // Finish the row whatever happened above, even when this workflow is being cancelled.
  progress.phase = 'finishing';
  progress.stopReason = outcome.stopReason;
  progress.failure = outcome.failure;
  const final = outcome;
  await CancellationScope.nonCancellable(async () => {
    await control.finishCrawl({ crawlId, state: final.state, stopReason: final.stopReason, failure: final.failure });
    await deliver();
  });
  upsertSearchAttributes([{ key: CRAWL_STATE_KEY, value: final.state }]);
  await afterFinish(input, final);
  progress.phase = 'done';
  await CancellationScope.nonCancellable(() => condition(allHandlersFinished));
  return { crawlId, state: final.state, stopReason: final.stopReason, failure: final.failure, levels: progress.levels };
}

/**
 * Runs once the row is finished. Full-text search hooks in here: when `input.index` is set, run
 * the indexing of this crawl (its failure must not change the crawl's outcome).
 */
async function afterFinish(input: CrawlWorkflowInput, _outcome: { state: 'succeeded' | 'failed'; stopReason: StopReason }): Promise<void> {
  if (input.index !== true) return;
  const { indexCrawl } = proxyActivities<Activities>({
    startToCloseTimeout: '30 minutes',
    retry: { initialInterval: '5 seconds', backoffCoefficient: 2, maximumInterval: '1 minute', maximumAttempts: 3 },
  });
  try {
    const indexed = await indexCrawl(input.crawlId);
    log.info('crawl indexed', { crawlId: input.crawlId, ...indexed });
  } catch (err) {
    // The outcome is already recorded; what was not indexed keeps indexed_at NULL, and
    // POST /api/crawls/:id/index (or indexPending after a rebuild) picks it up.
    log.warn('indexing the crawl failed', { crawlId: input.crawlId, error: describe(err) });
  }
}
