// The levels a receiver follows, for GET /levels and the tests: each one's state read back from its
// level workflow until it settles (then its report is built from its slices), the settled ones
// kept up to KEEP_LEVELS. A level another receiver accepted is followed from its workflow too.
import type { Client, WorkflowHandle } from '@temporalio/client';
import type { DispatchBody, LevelReportBody } from '../domain/contract.ts';
import { buildLevelReport } from './activities/report.ts';
import type { FlowKnobs } from './knobs.ts';
import { levelPrefix } from './level.ts';
import { levelWorkflowId } from './names.ts';
import { levelStateQuery, type LevelPhase, type ReportOutcome } from './workflows/messages.ts';

/** settled levels kept for GET /levels and waitForLevel */
const KEEP_LEVELS = 200;
/** how often a level's state is read back from its workflow for GET /levels and the tests */
const WATCH_INTERVAL_MS = 500;
/** every how many reads of a level's state its workflow is asked whether it closed unsettled */
const CLOSED_CHECK_EVERY = 6;
/** how often waitForLevel looks again for a level not dispatched yet */
const DISPATCH_POLL_MS = 50;

export type LevelState = 'queued' | LevelPhase;
export const SETTLED: readonly LevelState[] = ['reported', 'report-failed', 'dropped', 'failed'];

export interface LevelRun {
  crawlId: string;
  depth: number;
  dispatch: DispatchBody;
  knobs: FlowKnobs;
  state: LevelState;
  receivedAt: string;
  report?: LevelReportBody;
  outcome?: ReportOutcome;
  error?: string;
  /** settles when the level is reported, dropped or failed */
  done: Promise<void>;
}

export class LevelRuns {
  readonly levels: LevelRun[] = [];
  /** set when the receiver dies (tests): every level followed is dropped */
  killed = false;
  private readonly client: Client;

  constructor(client: Client) {
    this.client = client;
  }

  latest(crawlId: string, depth: number): LevelRun | undefined {
    return [...this.levels].reverse().find((l) => l.crawlId === crawlId && l.depth === depth);
  }

  track(dispatch: DispatchBody, knobs: FlowKnobs): LevelRun {
    const run = {
      crawlId: dispatch.crawlId,
      depth: dispatch.depth,
      dispatch,
      knobs,
      state: 'queued',
      receivedAt: new Date().toISOString(),
    } as LevelRun;
    this.levels.push(run);
    run.done = this.watch(run).finally(() => this.forgetOldest());
    return run;
  }

  /** A level another receiver accepted: followed from its workflow. */
  async attach(crawlId: string, depth: number): Promise<LevelRun | undefined> {
    const s = await this.client.workflow
      .getHandle(levelWorkflowId(crawlId, depth))
      .query(levelStateQuery)
      .catch(() => undefined);
    if (s === undefined) return undefined;
    return this.latest(crawlId, depth) ?? this.track(s.dispatch, {});
  }

  /** Waits for the level (received here, or by an earlier receiver) to settle. */
  async waitForLevel(crawlId: string, depth: number, timeoutMs: number): Promise<LevelRun> {
    const until = Date.now() + timeoutMs;
    for (;;) {
      const run = this.latest(crawlId, depth) ?? (await this.attach(crawlId, depth));
      if (run !== undefined) return settledBy(run, until, `level ${crawlId}/${depth} did not settle within ${timeoutMs} ms`);
      if (Date.now() > until) throw new Error(`level ${crawlId}/${depth} was never dispatched to the flow within ${timeoutMs} ms`);
      await new Promise((r) => setTimeout(r, DISPATCH_POLL_MS));
    }
  }

  async idle(): Promise<void> {
    await Promise.all(this.levels.map((l) => l.done));
  }

  /** Reads the level's state back from its workflow until it settles. */
  private async watch(run: LevelRun): Promise<void> {
    const handle = this.client.workflow.getHandle(levelWorkflowId(run.crawlId, run.depth));
    for (let reads = 1; ; reads++) {
      if (this.killed) {
        run.state = 'dropped';
        return;
      }
      const s = await handle.query(levelStateQuery).catch(() => undefined);
      if (s !== undefined) {
        run.outcome = s.outcome ?? run.outcome;
        if (s.error !== undefined) run.error = s.error;
        if (SETTLED.includes(s.phase)) return this.settle(run, s.phase, s.slices);
        run.state = s.phase;
      }
      // a workflow closed without settling (terminated, cancelled, timed out) answers its last
      // state for ever, or nothing: the level failed, and the receiver's close does not wait on it
      const closed = reads % CLOSED_CHECK_EVERY === 0 ? await closedStatus(handle) : undefined;
      if (closed !== undefined) {
        run.error ??= `the level workflow was ${closed.toLowerCase().replaceAll('_', ' ')} before it settled`;
        run.state = 'failed';
        return;
      }
      await new Promise((r) => setTimeout(r, WATCH_INTERVAL_MS));
    }
  }

  private async settle(run: LevelRun, phase: LevelState, slices: string[]): Promise<void> {
    if (phase !== 'failed')
      run.report = await buildLevelReport(
        this.client,
        { crawlId: run.crawlId, depth: run.depth, orgId: run.dispatch.orgId, prefix: levelPrefix(run.dispatch) },
        slices,
      ).catch(() => undefined);
    run.state = phase;
  }

  private forgetOldest(): void {
    const settled = this.levels.filter((l) => SETTLED.includes(l.state));
    for (const old of settled.slice(0, Math.max(0, settled.length - KEEP_LEVELS))) this.levels.splice(this.levels.indexOf(old), 1);
  }
}

/** The workflow's status when it closed other than by completing; undefined while it runs, once
 * it completed (its last state, read again, is settled), or when it cannot be asked. */
async function closedStatus(handle: WorkflowHandle): Promise<string | undefined> {
  const status = await handle
    .describe()
    .then((d) => d.status.name)
    .catch(() => undefined);
  return status === undefined || status === 'RUNNING' || status === 'COMPLETED' ? undefined : status;
}

/** The run once it settled; rejects with `late` when it has not by `until` (ms). */
async function settledBy(run: LevelRun, until: number, late: string): Promise<LevelRun> {
  let timer: NodeJS.Timeout | undefined;
  const tooLate = new Promise((_, reject) => (timer = setTimeout(() => reject(new Error(`${late} (state ${run.state})`)), Math.max(0, until - Date.now()))));
  await Promise.race([run.done, tooLate]).finally(() => clearTimeout(timer));
  return run;
}
