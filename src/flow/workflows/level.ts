// One dispatched level, durable (design.md "The capture tier on Temporal"): cut into slices
// (child workflows that pace their hosts), heartbeats to the ledger while they run, then the
// level report, retried until the level's deadline. Nothing of a level lives in a process's
// memory: the receiver, the flow worker or a capture worker may die at any point and the level
// goes on where it was. A dispatch sent again reaches this run as signal redispatch: the report
// goes where the latest says, and pages it adds are captured in a slice of their own. A level
// dispatched after its run closed starts a new run that reuses the pages the earlier runs
// captured (their slices' results), so no page is captured twice. A dispatch too large for one
// Temporal payload comes in parts (src/domain/dispatch-parts.ts): the level waits for all of them,
// until its deadline, before it captures.
import {
  allHandlersFinished,
  ApplicationFailure,
  ActivityFailure,
  condition,
  executeChild,
  patched,
  proxyActivities,
  setHandler,
  workflowInfo,
} from '@temporalio/workflow';
import type { DispatchBody } from '../../domain/contract.ts';
import { DispatchAssembly } from '../../domain/dispatch-parts.ts';
import { planSlices, sliceSlots } from '../../domain/level-slices.ts';
import { DEDUP_LIMITS, PayloadIndex } from '../../domain/wacz/payload-index.ts';
import type { FlowActivities, LevelTarget } from '../activities/types.ts';
import { dispatchBehaviors } from '../../domain/behavior-budget.ts';
import { levelPrefix, levelWindow, parseNotBefore } from '../level.ts';
import { REPORT_FINAL, SLICE_WORKFLOW, sliceWorkflowId } from '../names.ts';
import {
  dispatchPartSignal,
  levelStateQuery,
  redispatchSignal,
  type DispatchPart,
  type LevelInput,
  type LevelPhase,
  type LevelState,
  type ReportOutcome,
  type SliceInput,
  type SliceResult,
} from './messages.ts';

/** The step that reads the previous level's stored payloads (dedup across levels, issue 26). */
const PRIOR_PAYLOADS_PATCH = 'dedup-prior-payloads';

/** After its report the level stays open this long for a dispatch sent again meanwhile. */
const LINGER_AFTER_REPORT_MS = 60_000;
/** How long a level whose dispatch names no deadline waits for the rest of its parts. */
const PARTS_WAIT_MS = 10 * 60_000;

/** A dispatch coming in parts: its first part's input, and the pages so far. */
type Assembling = { input: LevelInput; pages: DispatchAssembly<DispatchBody['pages'][number]> };

const inParts = (input: LevelInput): boolean => input.parts !== undefined && input.parts.count > 1;

function assemblyOf(input: LevelInput): Assembling {
  const pages = new DispatchAssembly<DispatchBody['pages'][number]>(input.parts!.id, input.parts!.count);
  pages.add(0, input.dispatch.pages);
  return { input, pages };
}

export class LevelRun {
  private input: LevelInput;
  private phase: LevelPhase = 'capturing';
  /** every slice whose results make the report: earlier runs' first, then this run's */
  private readonly sliceIds: string[];
  private readonly done = new Set<string>();
  /** page URLs already in a slice (or captured by an earlier run) */
  private readonly assigned = new Set<string>();
  private pagesDone = 0;
  private outcome: ReportOutcome | undefined;
  private error: string | undefined;
  private redispatched = false;
  /** pages an earlier run captured, reported from its slices */
  private reusedPages = 0;
  private readonly notBefore: Record<string, number>;
  /** payloads the crawl's earlier levels and this level's finished slices stored */
  private readonly payloads = new PayloadIndex();
  /** false until the first dispatch whose pages are all in is taken */
  private ready: boolean;
  /** the latest dispatch still coming in parts; an earlier one left incomplete is dropped (every
   * dispatch names the whole level) */
  private assembling: Assembling | undefined;

  constructor(input: LevelInput) {
    this.input = input;
    this.sliceIds = [...(input.priorSlices ?? [])];
    this.notBefore = parseNotBefore(input.dispatch.notBefore);
    this.ready = !inParts(input);
    if (!this.ready) this.assembling = assemblyOf(input);
  }

  /** The level as a query answers it: the dispatch without its pages (a 20,000-page level's
   * would be a megabyte on every poll), their count beside it. */
  state(): LevelState {
    const { pages, ...dispatch } = this.input.dispatch;
    return {
      phase: this.phase,
      dispatch: { ...dispatch, pages: [] },
      pages: pages.length,
      slices: [...this.sliceIds],
      ...(this.outcome ? { outcome: this.outcome } : {}),
      ...(this.error !== undefined ? { error: this.error } : {}),
    };
  }

  /** A dispatch as it arrives (signal redispatch): whole, or the first of its parts. */
  redispatch(next: LevelInput): void {
    if (inParts(next)) {
      // signal-with-start hands the starting input over again as the signal
      if (this.assembling?.pages.id !== next.parts!.id) this.assembling = assemblyOf(next);
      return;
    }
    this.assembling = undefined;
    this.take(next);
  }

  /** A later part of the dispatch coming in parts: once every part is in, the dispatch is taken. */
  part(p: DispatchPart): void {
    const a = this.assembling;
    if (a === undefined || a.pages.id !== p.id || !a.pages.add(p.index, p.pages)) return;
    this.assembling = undefined;
    const { parts: _parts, ...input } = a.input;
    this.take({ ...input, dispatch: { ...input.dispatch, pages: a.pages.pages() } });
  }

  /** A dispatch whose pages are all in: the level's first, or a later one, whose capability, URLs
   * and deadline win and whose new pages are added. */
  private take(next: LevelInput): void {
    if (!this.ready) {
      this.input = next;
      this.ready = true;
      return;
    }
    const d = this.input.dispatch;
    const known = new Set(d.pages.map((p) => p.url));
    const added = next.dispatch.pages.filter((p) => !known.has(p.url));
    const moved = next.dispatch.capability !== d.capability || next.dispatch.reportUrl !== d.reportUrl;
    if (added.length === 0 && !moved) return;
    this.input = { ...this.input, dispatch: { ...next.dispatch, pages: [...d.pages, ...added] } };
    this.redispatched = true;
  }

  async run(): Promise<void> {
    if (!(await this.allPartsIn())) return;
    const prior = this.input.priorSlices ?? [];
    const d = this.input.dispatch;
    // patched: a level that started before this step existed replays without it
    if (d.depth > 0 && d.formats.includes('wacz') && patched(PRIOR_PAYLOADS_PATCH)) {
      const known = await proxyActivities<FlowActivities>({ startToCloseTimeout: 60_000 }).priorPayloads({ crawlId: d.crawlId, depth: d.depth - 1 });
      this.payloads.add(known);
    }
    if (prior.length > 0) {
      const captured = await proxyActivities<FlowActivities>({ startToCloseTimeout: 60_000 }).capturedPages({ slices: prior });
      for (const url of captured) this.assigned.add(url);
      this.reusedPages = this.input.dispatch.pages.filter((p) => this.assigned.has(p.url)).length;
    }
    for (;;) {
      if (!(await this.captureRound())) return;
      if ((this.input.knobs.dropReportDepths ?? []).includes(this.input.dispatch.depth)) {
        this.phase = 'dropped';
        return;
      }
      await this.report();
      // a dispatch that crossed the report (the ledger heard nothing for a while) gets it again
      const until = Date.now() + LINGER_AFTER_REPORT_MS;
      if (!(await condition(() => this.redispatched, Math.max(1, until - Date.now())))) return;
      this.redispatched = false;
      this.phase = 'capturing';
    }
  }

  /** Waits, until the level's deadline, for a dispatch whose pages are all in; false (the level
   * failed) when none came. The ledger, hearing nothing of the level, dispatches it again. */
  private async allPartsIn(): Promise<boolean> {
    if (this.ready) return true;
    const deadline = Date.parse(this.input.dispatch.deadline ?? '');
    const wait = Number.isNaN(deadline) ? PARTS_WAIT_MS : Math.max(1, deadline - Date.now());
    if (await condition(() => this.ready, wait)) return true;
    this.phase = 'failed';
    this.error = `the dispatch's pages did not all arrive (${this.assembling?.pages.id ?? 'no dispatch'} incomplete)`;
    return false;
  }

  /** Captures the pages not yet in a slice, with heartbeats; false when the level failed. */
  private async captureRound(): Promise<boolean> {
    const beating = this.heartbeats();
    try {
      await this.captureSlices();
    } catch (err) {
      this.phase = 'failed';
      this.error = (err as Error).message;
    }
    const ok = this.phase === 'capturing';
    if (ok) this.phase = 'reporting';
    await beating;
    return ok;
  }

  private async captureSlices(): Promise<void> {
    const d = this.input.dispatch;
    const pending = d.pages.map((_, i) => i).filter((i) => !this.assigned.has(d.pages[i]!.url));
    for (const i of pending) this.assigned.add(d.pages[i]!.url);
    const slices = planSlices(pending.map((i) => new URL(d.pages[i]!.url).host)).map((s) => ({ ...s, pages: s.pages.map((j) => pending[j]!) }));
    const slots = sliceSlots(
      slices.map((s) => s.hosts),
      d.hostParallelism,
    );
    let free = d.hostParallelism;
    const busyHosts = new Set<string>();
    const running = new Set<Promise<void>>();
    for (const [k, slice] of slices.entries()) {
      const need = slots[k]!;
      await condition(() => free >= need && (slice.splitHost === undefined || !busyHosts.has(slice.splitHost)));
      free -= need;
      if (slice.splitHost !== undefined) busyHosts.add(slice.splitHost);
      const id = sliceWorkflowId(workflowInfo().workflowId, this.sliceIds.length);
      this.sliceIds.push(id);
      const p: Promise<void> = executeChild<(i: SliceInput) => Promise<SliceResult>>(SLICE_WORKFLOW, {
        workflowId: id,
        args: [this.sliceInput(d, slice.pages, need)],
      }).then((r) => {
        free += need;
        if (slice.splitHost !== undefined) busyHosts.delete(slice.splitHost);
        // a later slice on the same host starts no earlier than its spacing allows
        for (const h of r.hosts)
          if (h.lastFinishedAt !== undefined) this.notBefore[h.host] = Math.max(this.notBefore[h.host] ?? 0, h.lastFinishedAt + h.delayMs);
        this.pagesDone += r.pages.length;
        this.payloads.add(r.payloads ?? []);
        this.done.add(id);
        running.delete(p);
      });
      running.add(p);
    }
    await Promise.all(running);
  }

  private sliceInput(d: DispatchBody, pages: number[], slots: number): SliceInput {
    const { startBy, finishBy } = levelWindow(d.deadline, this.input.receivedAt);
    return {
      crawlId: d.crawlId,
      depth: d.depth,
      pages: pages.map((index) => ({ index, url: d.pages[index]!.url, follow: d.pages[index]!.follow })),
      slots,
      perHostDelayMs: d.perHostDelayMs,
      notBefore: { ...this.notBefore },
      formats: d.formats,
      signing: d.signing,
      ...(d.qa === true ? { qa: true } : {}),
      behaviors: dispatchBehaviors(d),
      prefix: levelPrefix(d),
      knobs: this.input.knobs,
      captureQueue: this.input.captureQueue,
      startBy,
      finishBy,
      ...(d.formats.includes('wacz') ? { known: this.payloads.top(DEDUP_LIMITS.indexed) } : {}),
    };
  }

  private target(): LevelTarget {
    const d = this.input.dispatch;
    return { crawlId: d.crawlId, depth: d.depth, orgId: d.orgId, prefix: levelPrefix(d), ...(d.capability !== undefined ? { capability: d.capability } : {}) };
  }

  private async heartbeats(): Promise<void> {
    const act = proxyActivities<FlowActivities>({ startToCloseTimeout: Math.max(1000, this.input.heartbeatIntervalMs), retry: { maximumAttempts: 1 } });
    // the first beat after one interval, once the slices are under way (the ledger passes few on)
    while (!(await condition(() => this.phase !== 'capturing', this.input.heartbeatIntervalMs))) {
      const url = this.input.dispatch.heartbeatUrl;
      if (url === undefined) return;
      const running = this.sliceIds.filter((id) => !this.done.has(id) && !(this.input.priorSlices ?? []).includes(id));
      await act
        .sendHeartbeat({
          ...this.target(),
          heartbeatUrl: url,
          pagesTotal: this.input.dispatch.pages.length,
          pagesDoneBefore: this.pagesDone + this.reusedPages,
          running,
        })
        .catch(() => false);
    }
  }

  /** Sends the report, retried until the level's deadline: an API away for minutes loses nothing. */
  private async report(): Promise<void> {
    this.phase = 'reporting';
    const d = this.input.dispatch;
    const deadline = Date.parse(d.deadline ?? '');
    const left = Number.isNaN(deadline) ? 30 * 60_000 : Math.max(10_000, deadline - Date.now());
    const retry = this.input.reportRetry;
    const act = proxyActivities<FlowActivities>({
      scheduleToCloseTimeout: left,
      startToCloseTimeout: 60_000,
      retry: {
        initialInterval: retry?.baseDelayMs ?? 1000,
        backoffCoefficient: 2,
        maximumInterval: 10_000,
        ...(retry ? { maximumAttempts: retry.attempts } : {}),
        nonRetryableErrorTypes: [REPORT_FINAL],
      },
    });
    try {
      this.outcome = await act.sendReport({ ...this.target(), reportUrl: d.reportUrl, slices: [...this.sliceIds] });
    } catch (err) {
      this.outcome = outcomeOf(err);
    }
    this.phase = this.outcome.delivered ? 'reported' : 'report-failed';
  }
}

function outcomeOf(err: unknown): ReportOutcome {
  const cause = err instanceof ActivityFailure ? err.cause : err;
  if (cause instanceof ApplicationFailure && cause.details?.[0] !== undefined) return cause.details[0] as ReportOutcome;
  return { delivered: false, attempts: [{ at: new Date().toISOString(), error: (cause as Error | undefined)?.message ?? String(err) }] };
}

export async function captureLevel(input: LevelInput): Promise<Omit<LevelState, 'dispatch'>> {
  const level = new LevelRun(input);
  setHandler(redispatchSignal, (next) => level.redispatch(next));
  setHandler(dispatchPartSignal, (p) => level.part(p));
  setHandler(levelStateQuery, () => level.state());
  await level.run();
  await condition(allHandlersFinished);
  const { dispatch: _dispatch, ...settled } = level.state();
  return settled;
}
