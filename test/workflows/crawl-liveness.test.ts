// The crawl workflow's waiting for a level, with time skipped: a 30-minute level timeout, a
// 60-second liveness window and re-dispatches all run in well under a second of wall time.
// Activities are recording mocks; the workflow code and the Temporal server semantics are real.
// CAPTURE_LEDGER_RECORD_HISTORIES=1 writes each history to test/workflows/histories/ for the
// replay test.
import { writeFileSync } from 'node:fs';
import { randomUUID } from 'node:crypto';
import { activityInfo } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import type { WorkflowHandle } from '@temporalio/client';
import { describe, expect, it } from 'vitest';
import type { CrawlProgress } from '../../src/domain/crawl.ts';
import type { LevelHeartbeat } from '../../src/domain/liveness.ts';
import { crawl, type CrawlWorkflowInput } from '../../src/workflows/crawl.ts';
import { cancelSignal, levelHeartbeatSignal, levelReportedSignal, progressQuery } from '../../src/workflows/messages.ts';
import { admitted, mockWorker, useTimeSkippingEnv } from './support.ts';

const RECORD = process.env.CAPTURE_LEDGER_RECORD_HISTORIES === '1';

interface Calls {
  dispatch: { depth: number; at: number }[];
  admit: { depth: number; reportId: string; expand: boolean }[];
  finish: { state: string; stopReason: string; failure?: string | null }[];
}

const t = useTimeSkippingEnv();

const heartbeat = (depth: number, pagesDone: number): LevelHeartbeat => ({
  depth,
  pagesTotal: 14,
  pagesDone,
  pagesInFlight: 1,
  hosts: [{ host: 'a.test', queued: 13 - pagesDone, inFlight: 1, nextAllowedAt: '2026-01-01T00:00:00.000Z' }],
  receivedAt: '2026-01-01T00:00:00.000Z',
});

/**
 * Runs a crawl of `maxDepth` levels against mock activities; `drive` plays the flow's part
 * (heartbeats and reports, as the API would signal them) while the worker runs.
 */
async function run(
  name: string,
  opts: { maxDepth?: number; input?: Partial<CrawlWorkflowInput>; failRedispatch?: boolean },
  drive: (h: WorkflowHandle<typeof crawl>, calls: Calls) => Promise<void>,
) {
  const crawlId = randomUUID();
  const taskQueue = `liveness-${randomUUID()}`;
  const calls: Calls = { dispatch: [], admit: [], finish: [] };
  const worker = await mockWorker(t.env, taskQueue, {
    beginCrawl: async () => ({ running: true, orgId: 'acme', maxDepth: opts.maxDepth ?? 0 }),
    dispatchLevel: async ({ depth }) => {
      // When the workflow scheduled the dispatch, on the server's skipped clock: the activity's
      // own clock reading lags its scheduling by however long the worker took to pick it up.
      calls.dispatch.push({ depth, at: activityInfo().scheduledTimestampMs });
      if (opts.failRedispatch && calls.dispatch.length > 1) throw ApplicationFailure.nonRetryable('webhook unreachable', 'DispatchRejected');
      return { depth, pages: 14, follow: 0, hosts: 1 };
    },
    admitLevel: async ({ depth, reportId, expand }) => {
      calls.admit.push({ depth, reportId, expand });
      return admitted({ crawlId, depth, reportId, pages: 14, captured: 14, nextLevelPages: depth < (opts.maxDepth ?? 0) ? 3 : 0 });
    },
    deliverTuples: async () => ({ delivered: 0, failed: 0, remaining: 0, deadLettered: 0, dead: 0 }),
    finishCrawl: async (f) => {
      calls.finish.push({ state: f.state, stopReason: f.stopReason, failure: f.failure });
      return { finished: true };
    },
  });
  return worker.runUntil(async () => {
    const handle = await t.env.client.workflow.start(crawl, {
      taskQueue,
      workflowId: `crawl-${crawlId}`,
      args: [{ crawlId, orgId: 'acme', levelTimeoutSeconds: 1800, ...opts.input }],
    });
    await drive(handle, calls);
    const result = await handle.result();
    if (RECORD) writeFileSync(new URL(`./histories/${name}.json`, import.meta.url), JSON.stringify(await handle.fetchHistory(), null, 1) + '\n');
    return { result, calls, handle };
  });
}

/** Waits (in real time, time not skipping) until the workflow has asked for `n` dispatches. */
async function dispatched(calls: Calls, n: number): Promise<void> {
  for (let i = 0; calls.dispatch.length < n; i += 1) {
    if (i > 500) throw new Error(`expected ${n} dispatches, saw ${calls.dispatch.length}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

describe('crawl workflow: waiting for a level (time skipped)', () => {
  it('a flow that never sends heartbeats is waited for until the level timeout and never re-dispatched', async () => {
    const { result, calls } = await run('no-heartbeat-timeout', {}, async () => {});
    expect(result.state).toBe('failed');
    expect(result.failure).toBe('level 0 was not reported within 1800s');
    expect(calls.dispatch).toHaveLength(1);
    expect(calls.finish).toEqual([{ state: 'failed', stopReason: 'failed', failure: 'level 0 was not reported within 1800s' }]);
  });

  it("a flow without heartbeats that reports after 20 minutes still succeeds (today's behaviour)", async () => {
    const { result, calls } = await run('no-heartbeat-late-report', {}, async (h, c) => {
      await dispatched(c, 1);
      await t.env.sleep('20 minutes');
      await h.signal(levelReportedSignal, { depth: 0, reportId: 'r0' });
    });
    expect(result).toMatchObject({ state: 'succeeded', stopReason: 'max_depth' });
    expect(calls.dispatch).toHaveLength(1);
  });

  it('heartbeats that stop re-dispatch the level after the window, 3 times, then fail the crawl saying why', async () => {
    const { result, calls } = await run('heartbeats-stop', {}, async (h, c) => {
      await dispatched(c, 1);
      await h.signal(levelHeartbeatSignal, heartbeat(0, 2));
    });
    expect(result.state).toBe('failed');
    expect(result.failure).toBe('level 0: the capture flow sent no heartbeat for 60s, 3 re-dispatches did not bring it back');
    expect(calls.dispatch).toHaveLength(4);
    const gaps = calls.dispatch.slice(1).map((d, i) => d.at - calls.dispatch[i]!.at);
    for (const g of gaps) expect(g).toBeGreaterThanOrEqual(60_000);
    expect(result.levels[0]).toMatchObject({ depth: 0, redispatches: 3, heartbeat: null });
  });

  it('a re-dispatched level that is then reported lets the crawl succeed, and progress shows the re-dispatch and the new heartbeat', async () => {
    const { result, calls } = await run('redispatch-then-report', { maxDepth: 1 }, async (h, c) => {
      await dispatched(c, 1);
      await h.signal(levelHeartbeatSignal, heartbeat(0, 3));
      const p1 = await h.query(progressQuery);
      expect(p1.levels[0]?.heartbeat).toMatchObject({ depth: 0, pagesDone: 3, hosts: [{ host: 'a.test', queued: 10 }] });
      await t.env.sleep('61 seconds');
      await dispatched(c, 2);
      const p2: CrawlProgress = await h.query(progressQuery);
      expect(p2).toMatchObject({ phase: 'waiting', depth: 0 });
      expect(p2.levels[0]).toMatchObject({ redispatches: 1, heartbeat: null });
      await h.signal(levelHeartbeatSignal, heartbeat(0, 5));
      expect((await h.query(progressQuery)).levels[0]?.heartbeat?.pagesDone).toBe(5);
      await h.signal(levelReportedSignal, { depth: 0, reportId: 'r0' });
      await dispatched(c, 3);
      await h.signal(levelReportedSignal, { depth: 1, reportId: 'r1' });
    });
    expect(result).toMatchObject({ state: 'succeeded', stopReason: 'max_depth' });
    expect(calls.dispatch.map((d) => d.depth)).toEqual([0, 0, 1]);
    expect(calls.admit.map((a) => a.reportId)).toEqual(['r0', 'r1']);
  });

  it('heartbeats every 45 s keep a long level alive: no re-dispatch in 9 minutes', async () => {
    const { result, calls } = await run('heartbeats-keep-alive', {}, async (h, c) => {
      await dispatched(c, 1);
      for (let i = 0; i < 12; i += 1) {
        await h.signal(levelHeartbeatSignal, heartbeat(0, i));
        await t.env.sleep('45 seconds');
      }
      await h.signal(levelReportedSignal, { depth: 0, reportId: 'r0' });
    });
    expect(result.state).toBe('succeeded');
    expect(calls.dispatch).toHaveLength(1);
  });

  it('heartbeats of another level do not arm the liveness window', async () => {
    const { result, calls } = await run('other-level-heartbeat', {}, async (h, c) => {
      await dispatched(c, 1);
      await h.signal(levelHeartbeatSignal, heartbeat(1, 1));
    });
    expect(result.failure).toBe('level 0 was not reported within 1800s');
    expect(calls.dispatch).toHaveLength(1);
    expect(result.levels.map((l) => l.depth)).toEqual([0]);
  });

  it('re-dispatches that fail count against the budget; the crawl still ends within the windows', async () => {
    const { result, calls } = await run('redispatch-fails', { input: { livenessWindowSeconds: 10, maxRedispatches: 2 } }, async (h, c) => {
      await dispatched(c, 1);
      await h.signal(levelHeartbeatSignal, heartbeat(0, 1));
    });
    expect(calls.dispatch).toHaveLength(3);
    expect(result.failure).toBe('level 0: the capture flow sent no heartbeat for 10s, 2 re-dispatches did not bring it back');
  });

  it('a cancel while a level is quiet ends the crawl at once, without a re-dispatch', async () => {
    const { result, calls } = await run('cancel-while-waiting', {}, async (h, c) => {
      await dispatched(c, 1);
      await h.signal(levelHeartbeatSignal, heartbeat(0, 1));
      await t.env.sleep('30 seconds');
      await h.signal(cancelSignal, { reason: 'wrong seeds' });
    });
    expect(result.failure).toBe('cancelled: wrong seeds');
    expect(calls.dispatch).toHaveLength(1);
  });

  it('a report signalled twice is admitted once', async () => {
    const { result, calls } = await run('duplicate-report', {}, async (h, c) => {
      await dispatched(c, 1);
      await h.signal(levelReportedSignal, { depth: 0, reportId: 'r0' });
      await h.signal(levelReportedSignal, { depth: 0, reportId: 'r0' });
    });
    expect(result.state).toBe('succeeded');
    expect(calls.admit).toHaveLength(1);
  });
});
