// One crawl as its workflow drives it: the state the signals change and the query reads, and the
// steps of the state machine in crawl.ts —
//
//   dispatch a level → wait for its report → admit it → next level, or stop → finish the row.
//
// Deterministic: no I/O here, activities imported as types only. The order of the activity calls
// and timers is what recorded histories replay against (test/workflows/replay.test.ts).
import { allHandlersFinished, CancellationScope, condition, isCancellation, log, patched, proxyActivities, upsertSearchAttributes } from '@temporalio/workflow';
import type { Activities } from '../activities/index.ts';
import type { BeginResult } from '../activities/crawl.ts';
import type { DispatchResult } from '../activities/dispatch-level.ts';
import type { AdmitLevelResult } from '../ledger/admit-level.ts';
import { decideAfterLevel, type CrawlProgress, type LevelSummary } from '../domain/crawl.ts';
import { isPastDeadline } from '../domain/level.ts';
import {
  beat,
  LIVENESS_DEFAULTS,
  nextExpiry,
  onWaitEnded,
  redispatched,
  watchFrom,
  type LevelHeartbeat,
  type LevelWatch,
  type LivenessPolicy,
} from '../domain/liveness.ts';
import { CRAWL_STATE_KEY } from '../temporal/search-attributes.ts';
import { ADMIT_OPTIONS, CONTROL_OPTIONS, DELIVER_OPTIONS, dispatchOptions, INDEX_OPTIONS } from './activity-options.ts';
import type { CrawlOutcome, CrawlWorkflowInput, CrawlWorkflowResult } from './crawl-types.ts';
import { describe, isStaleReport } from './failures.ts';
import type { CancelRequest, ReportRefused } from './messages.ts';
import { ReportQueue, type LevelReported } from './report-queue.ts';

/** The step that marks a crawl workflow with no running row CrawlState=absent (a history from
 * before it replays without it). */
const ABSENT_STATE_PATCH = 'absent-crawl-state';

/** The step that judges re-reports of a re-dispatched level by the re-dispatch's deadline, which
 * the API takes reports until, not the first dispatch's (a history from before it keeps the first). */
const REDISPATCH_DEADLINE_PATCH = 'redispatch-deadline';

/** A level either yields its admission (the crawl goes on from it) or ends the crawl. */
type LevelEnd = { admitted: AdmitLevelResult } | { stopped: CrawlOutcome };

export class CrawlRun {
  readonly progress: CrawlProgress;
  private readonly reports = new ReportQueue();
  /** when the current level last had a heartbeat (workflow time); other levels' are ignored */
  private lastBeat: { depth: number; at: number } | undefined;
  private cancelReason: string | undefined;
  /** a refused report stops the crawl as a cancel does (cancelRequested), with its own failure */
  private refusal: string | undefined;
  /** each level's deadline as last dispatched (ms since the epoch; undefined in old histories) */
  private readonly deadlines = new Map<number, number | undefined>();
  private readonly liveness: LivenessPolicy;
  private readonly control = proxyActivities<Activities>(CONTROL_OPTIONS);
  private readonly admitter = proxyActivities<Activities>(ADMIT_OPTIONS);
  private readonly deliverer = proxyActivities<Activities>(DELIVER_OPTIONS);
  private readonly dispatcher: Activities;
  private readonly input: CrawlWorkflowInput;

  constructor(input: CrawlWorkflowInput) {
    this.input = input;
    this.progress = { crawlId: input.crawlId, phase: 'starting', depth: 0, maxDepth: 0, cancelRequested: false, levels: [], stopReason: null, failure: null };
    this.liveness = {
      levelTimeoutMs: input.levelTimeoutSeconds * 1000,
      windowMs: (input.livenessWindowSeconds ?? LIVENESS_DEFAULTS.windowSeconds) * 1000,
      maxRedispatches: input.maxRedispatches ?? LIVENESS_DEFAULTS.maxRedispatches,
    };
    this.dispatcher = proxyActivities<Activities>(dispatchOptions(input.dispatchAttempts));
  }

  private get crawlId(): string {
    return this.input.crawlId;
  }

  // ——— message handlers ———

  onLevelReported(report: LevelReported): void {
    this.reports.offer(report);
  }

  onHeartbeat(hb: LevelHeartbeat): void {
    // the flow may beat before dispatchLevel has even returned
    const { phase, depth } = this.progress;
    if (hb.depth !== depth || (phase !== 'dispatching' && phase !== 'waiting')) return;
    this.lastBeat = { depth: hb.depth, at: Date.now() };
    this.summary(hb.depth).heartbeat = hb;
  }

  onReportRefused(r: ReportRefused): void {
    this.refusal ??= `level ${r.depth} report refused: ${r.reason}`.slice(0, 1000);
    this.progress.cancelRequested = true;
  }

  onCancel(request?: CancelRequest): void {
    this.progress.cancelRequested = true;
    this.cancelReason = request?.reason;
  }

  // ——— the crawl's steps ———

  /** The workflow's first step: is there a running row to drive? */
  begin(): Promise<BeginResult> {
    return this.control.beginCrawl({ crawlId: this.crawlId });
  }

  /** No running row: the API's transaction never committed, or the row was already finished. Nothing to drive, nothing to finish. */
  async exitAbsent(): Promise<CrawlWorkflowResult> {
    log.warn('no running crawl row; exiting', { crawlId: this.crawlId });
    // the API started it as running: an operator's CrawlState="running" must not list it for ever
    if (patched(ABSENT_STATE_PATCH)) upsertSearchAttributes([{ key: CRAWL_STATE_KEY, value: 'absent' }]);
    this.progress.phase = 'done';
    await condition(allHandlersFinished);
    return { crawlId: this.crawlId, state: 'absent', stopReason: null, failure: null, levels: [] };
  }

  /** Level after level from depth 0, until one ends the crawl or decideAfterLevel stops it. */
  async levels(maxDepth: number): Promise<CrawlOutcome> {
    this.progress.maxDepth = maxDepth;
    let depth = 0;
    let truncated = false;
    for (;;) {
      const end = await this.runLevel(depth);
      if ('stopped' in end) return end.stopped;
      const { nextLevelPages, cutPages, cutSoFar } = end.admitted;
      const step = decideAfterLevel({ depth, maxDepth, nextLevelPages, cutPages, truncated, cutSoFar });
      truncated = truncated || cutPages > 0;
      if (step.kind === 'stop') return { state: 'succeeded', stopReason: step.reason, failure: null };
      depth = step.depth;
    }
  }

  private async runLevel(depth: number): Promise<LevelEnd> {
    this.progress.depth = depth;
    this.progress.phase = 'dispatching';
    const dispatched = await this.dispatch(depth);
    this.summary(depth).dispatched = dispatched.pages;
    this.deadlines.set(depth, dispatched.deadline);
    // the capture_job tuples queued with the row: deliver them while the flow works
    if (depth === 0) await this.deliver();

    this.progress.phase = 'waiting';
    let lost = await this.waitForReport(depth);
    for (;;) {
      if (this.progress.cancelRequested) return { stopped: this.cancelled() };
      if (lost !== undefined) return { stopped: { state: 'failed', stopReason: 'failed', failure: lost } };
      this.progress.phase = 'admitting';
      const admitted = await this.admitReports(depth);
      if (this.progress.cancelRequested) return { stopped: this.cancelled() };
      if (admitted !== undefined) return { admitted };
      // every report taken was stale: the one that replaced it is signalled, or about to be
      this.progress.phase = 'waiting';
      lost = await this.waitForSuccessor(depth);
    }
  }

  private dispatch(depth: number): Promise<DispatchResult> {
    return this.dispatcher.dispatchLevel({ crawlId: this.crawlId, depth, levelTimeoutSeconds: this.input.levelTimeoutSeconds });
  }

  /**
   * Waits for the level's report (or a cancel). Returns the crawl's failure when it cannot come:
   * the level timeout passed, or the flow went quiet and re-dispatching did not bring it back.
   */
  private async waitForReport(depth: number): Promise<string | undefined> {
    const beatAt = (): number | undefined => (this.lastBeat?.depth === depth ? this.lastBeat.at : undefined);
    let watch: LevelWatch = watchFrom(Date.now());
    for (;;) {
      const heard = beatAt();
      if (heard !== undefined) watch = beat(watch, heard);
      const { at } = nextExpiry(watch, this.liveness);
      // before the first heartbeat the timer is the level timeout: the first one shortens it
      const woke = await condition(() => this.reportOrCancel(depth) || (heard === undefined && beatAt() !== undefined), Math.max(1, at - Date.now()));
      if (this.reportOrCancel(depth)) return undefined;
      if (woke) continue;
      const latest = beatAt();
      if (latest !== undefined) watch = beat(watch, latest);
      const step = onWaitEnded(watch, this.liveness, Date.now(), depth);
      if (step.kind === 'fail') return step.failure;
      if (step.kind === 'redispatch') watch = await this.redispatch(depth, watch);
    }
  }

  private reportOrCancel(depth: number): boolean {
    return this.progress.cancelRequested || this.reports.has(depth);
  }

  /** The flow went quiet: dispatch the level again. A failed re-dispatch still counts as one. */
  private async redispatch(depth: number, watch: LevelWatch): Promise<LevelWatch> {
    const next = redispatched(watch, Date.now());
    Object.assign(this.summary(depth), { redispatches: next.redispatches, heartbeat: null });
    log.warn('no heartbeat from the capture flow; dispatching the level again', { crawlId: this.crawlId, depth, redispatches: next.redispatches });
    try {
      const again = await this.dispatch(depth);
      // the row's deadline moved with it: the API takes the level's reports until then
      if (again.deadline !== undefined && patched(REDISPATCH_DEADLINE_PATCH)) this.deadlines.set(depth, again.deadline);
    } catch (err) {
      // the flow may still be coming back: this counted as a re-dispatch, the window runs again
      log.warn('re-dispatch failed', { crawlId: this.crawlId, depth, error: describe(err) });
    }
    return next;
  }

  /**
   * The level's reports so far were all replaced by a newer one, whose signal follows its row. The
   * flow is done with the level, so no heartbeat will come: wait up to a level timeout, no longer.
   */
  private async waitForSuccessor(depth: number): Promise<string | undefined> {
    if (await condition(() => this.reportOrCancel(depth), this.liveness.levelTimeoutMs)) return undefined;
    return `level ${depth}: its report was replaced and the newer one was not signalled within ${this.input.levelTimeoutSeconds}s`;
  }

  /**
   * Admits the newest queued report of the level; a report of it arriving again before the
   * next level goes out replaces it. Re-reports are capped by the API; besides, none is admitted
   * once the level's deadline has passed, so a flow reporting again and again cannot keep the
   * crawl running. Undefined when every report taken was stale (replaced in the store).
   */
  private async admitReports(depth: number): Promise<AdmitLevelResult | undefined> {
    let result: AdmitLevelResult | undefined;
    const pastDeadline = (): boolean => isPastDeadline(this.deadlines.get(depth), Date.now());
    // until one report of the level is admitted, the deadline stops nothing: its first report never is refused for it
    const next = (): LevelReported | undefined => (result !== undefined && pastDeadline() ? undefined : this.reports.take(depth));
    do {
      for (let r = this.reports.take(depth); r !== undefined; r = next()) result = (await this.admit(depth, r, true)) ?? result;
      await this.readmitEarlier(depth);
      await this.deliver();
    } while (this.reports.has(depth) && !pastDeadline());
    return result;
  }

  /** Re-reports of levels whose next level is already out: correct the ledger, leave the frontier. */
  private async readmitEarlier(current: number): Promise<void> {
    for (const depth of this.reports.earlierDepths(current)) {
      const r = this.reports.take(depth);
      if (r !== undefined) await this.admit(depth, r, false);
    }
  }

  /** Admits one report and records it; undefined when it was stale (a newer report replaced it). */
  private async admit(depth: number, report: LevelReported, expand: boolean): Promise<AdmitLevelResult | undefined> {
    try {
      const result = await this.admitter.admitLevel({ crawlId: this.crawlId, depth, reportId: report.reportId, expand });
      this.record(result);
      return result;
    } catch (err) {
      if (!isStaleReport(err)) throw err;
      log.info('report replaced by a newer one; waiting for that one', { crawlId: this.crawlId, depth, reportId: report.reportId });
      return undefined;
    }
  }

  private async deliver(): Promise<void> {
    // Delivery left the workflow: the worker's outbox wake drains as each write commits
    // (src/worker/outbox-wake.ts). Histories recorded before the patch still deliver here.
    if (patched('outbox-leaves-crawl')) return;
    try {
      await this.deliverer.deliverTuples();
    } catch (err) {
      // The tuples stay queued; the outbox-drain schedule delivers them. Not a reason to fail.
      log.warn('tuple delivery deferred to the outbox-drain schedule', { crawlId: this.crawlId, error: describe(err) });
    }
  }

  // ——— how it ends ———

  private cancelled(): CrawlOutcome {
    const failure = this.refusal ?? `cancelled${this.cancelReason ? `: ${this.cancelReason}` : ''}`;
    return { state: 'failed', stopReason: 'failed', failure };
  }

  /** A step threw: an activity that failed for good, or this workflow being cancelled. */
  failedBy(err: unknown): CrawlOutcome {
    const outcome: CrawlOutcome = { state: 'failed', stopReason: 'failed', failure: isCancellation(err) ? 'workflow cancelled' : describe(err) };
    log.error('crawl failed', { crawlId: this.crawlId, failure: outcome.failure });
    return outcome;
  }

  /** Finishes the row whatever happened, even while this workflow is being cancelled. */
  async finish(outcome: CrawlOutcome): Promise<CrawlWorkflowResult> {
    Object.assign(this.progress, { phase: 'finishing', stopReason: outcome.stopReason, failure: outcome.failure });
    await CancellationScope.nonCancellable(async () => {
      await this.control.finishCrawl({ crawlId: this.crawlId, ...outcome });
      await this.deliver();
    });
    upsertSearchAttributes([{ key: CRAWL_STATE_KEY, value: outcome.state }]);
    await this.index();
    this.progress.phase = 'done';
    await CancellationScope.nonCancellable(() => condition(allHandlersFinished));
    return { crawlId: this.crawlId, ...outcome, levels: this.progress.levels };
  }

  /** Once the row is finished, when search is configured; its failure does not change the outcome. */
  private async index(): Promise<void> {
    if (this.input.index !== true) return;
    try {
      const indexed = await proxyActivities<Activities>(INDEX_OPTIONS).indexCrawl(this.crawlId);
      log.info('crawl indexed', { crawlId: this.crawlId, ...indexed });
    } catch (err) {
      // What was not indexed keeps indexed_at NULL, and POST /api/crawls/:id/index (or
      // indexPending after a rebuild) picks it up.
      log.warn('indexing the crawl failed', { crawlId: this.crawlId, error: describe(err) });
    }
  }

  // ——— progress ———

  private summary(depth: number): LevelSummary {
    let s = this.progress.levels.find((l) => l.depth === depth);
    if (s === undefined) {
      s = { depth, dispatched: 0, reportId: null, captured: 0, failed: 0, skipped: 0, archives: 0, nextLevelPages: 0, cutPages: 0 };
      this.progress.levels.push(s);
    }
    return s;
  }

  private record(r: AdmitLevelResult): void {
    const { reportId, captured, failed, skipped, archives } = r;
    Object.assign(this.summary(r.depth), {
      reportId,
      captured,
      failed,
      skipped,
      archives,
      ...(r.expanded ? { nextLevelPages: r.nextLevelPages, cutPages: r.cutPages } : {}),
    });
  }
}
