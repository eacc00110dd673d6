// The crawl workflow's side of reports bound to their dispatch, with time skipped: a report the
// API refused (reportRefused) fails the crawl at once, and a flow that keeps re-reporting a level
// cannot keep the crawl running past that level's deadline. Activities are recording mocks.
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { LevelHeartbeat } from '../../src/domain/liveness.ts';
import { levelHeartbeatSignal, levelReportedSignal, reportRefusedSignal } from '../../src/workflows/messages.ts';
import { admitted, mockWorker, nothingToDeliver, startCrawlWorkflow, untilProgress, useTimeSkippingEnv } from './support.ts';

const t = useTimeSkippingEnv();

const LEVEL_TIMEOUT_S = 1800;

async function run(
  opts: { deadlineInMs: number; onAdmit?: (crawlId: string, n: number) => Promise<void> },
  drive: (crawlId: string, dispatches: readonly number[]) => Promise<void>,
) {
  const crawlId = randomUUID();
  const taskQueue = `report-bound-${randomUUID()}`;
  const admits: string[] = [];
  const finishes: { state: string; failure?: string | null }[] = [];
  let dispatchedAt = 0;
  let finishedAt = 0;
  const dispatches: number[] = [];
  const worker = await mockWorker(t.env, taskQueue, {
    beginCrawl: async () => ({ running: true, orgId: 'acme', maxDepth: 0 }),
    dispatchLevel: async ({ depth }) => {
      dispatchedAt = await t.env.currentTimeMs();
      dispatches.push(dispatchedAt);
      return { depth, pages: 1, follow: 0, hosts: 1, deadline: dispatchedAt + opts.deadlineInMs };
    },
    admitLevel: async ({ depth, reportId }) => {
      admits.push(reportId);
      await opts.onAdmit?.(crawlId, admits.length);
      return admitted({ crawlId, depth, reportId, pages: 1, captured: 1, nextLevelPages: 0 });
    },
    deliverTuples: nothingToDeliver,
    finishCrawl: async (f) => {
      finishes.push({ state: f.state, failure: f.failure });
      // time skips ahead once the workflow has nothing left to wait for: note it now
      finishedAt = await t.env.currentTimeMs();
      return { finished: true };
    },
  });
  return worker.runUntil(async () => {
    const handle = await startCrawlWorkflow(t.env, taskQueue, crawlId, LEVEL_TIMEOUT_S);
    await drive(crawlId, dispatches);
    const result = await handle.result();
    return { result, admits, finishes, dispatches, finishedAfterMs: finishedAt - dispatchedAt };
  });
}

/** Waits in real time until the workflow is waiting for level 0's report. */
const waiting = (crawlId: string): Promise<void> =>
  untilProgress(
    t.env,
    crawlId,
    (p) => p?.phase === 'waiting',
    500,
    () => 'the workflow never waited for its level',
  );

describe('crawl workflow: reports bound to their dispatch (time skipped)', () => {
  it('a refused report fails the crawl at once, saying why, and nothing is admitted', async () => {
    const { result, admits, finishes, finishedAfterMs } = await run({ deadlineInMs: LEVEL_TIMEOUT_S * 1000 }, async (crawlId) => {
      await waiting(crawlId);
      await t.env.client.workflow
        .getHandle(`crawl-${crawlId}`)
        .signal(reportRefusedSignal, { depth: 0, reason: 'JWTExpired: "exp" claim timestamp check failed' });
    });
    expect(result).toMatchObject({ state: 'failed', stopReason: 'failed', failure: 'level 0 report refused: JWTExpired: "exp" claim timestamp check failed' });
    expect(finishes).toEqual([{ state: 'failed', failure: 'level 0 report refused: JWTExpired: "exp" claim timestamp check failed' }]);
    expect(admits).toEqual([]);
    expect(finishedAfterMs).toBeLessThan(60_000);
  });

  it('a level re-reported during every admission stops being admitted at its deadline', async () => {
    const deadlineInMs = 60_000;
    const { result, admits, finishedAfterMs } = await run(
      {
        deadlineInMs,
        // each admission takes 25 s, and the flow reports the level again meanwhile
        onAdmit: async (crawlId, n) => {
          await t.env.client.workflow.getHandle(`crawl-${crawlId}`).signal(levelReportedSignal, { depth: 0, reportId: `again-${n}` });
          await t.env.sleep('25 seconds');
        },
      },
      async (crawlId) => {
        await waiting(crawlId);
        await t.env.client.workflow.getHandle(`crawl-${crawlId}`).signal(levelReportedSignal, { depth: 0, reportId: 'first' });
      },
    );
    expect(result).toMatchObject({ state: 'succeeded', stopReason: 'max_depth' });
    // admissions start at 0, 25 and 50 s; the one due at 75 s is past the 60 s deadline
    expect(admits).toEqual(['first', 'again-1', 'again-2']);
    expect(finishedAfterMs).toBeLessThan(deadlineInMs + 30_000);
  });

  it("a re-dispatched level is admitted until the re-dispatch's deadline, which the API takes its reports until, not the first dispatch's", async () => {
    const deadlineInMs = 90_000;
    const beat: LevelHeartbeat = { depth: 0, pagesTotal: 1, pagesDone: 0, pagesInFlight: 1, hosts: [], receivedAt: '2026-01-01T00:00:00.000Z' };
    const { result, admits, dispatches } = await run(
      {
        deadlineInMs,
        // each admission takes 25 s, and the flow reports the level again meanwhile
        onAdmit: async (crawlId, n) => {
          await t.env.client.workflow.getHandle(`crawl-${crawlId}`).signal(levelReportedSignal, { depth: 0, reportId: `again-${n}` });
          await t.env.sleep('25 seconds');
        },
      },
      async (crawlId, seen) => {
        await waiting(crawlId);
        const h = t.env.client.workflow.getHandle(`crawl-${crawlId}`);
        // one heartbeat, then silence: the level is dispatched again after the 60 s window
        await h.signal(levelHeartbeatSignal, beat);
        await t.env.sleep('61 seconds');
        for (let i = 0; seen.length < 2; i += 1) {
          if (i > 500) throw new Error('the level was never dispatched again');
          await new Promise((r) => setTimeout(r, 10));
        }
        await h.signal(levelReportedSignal, { depth: 0, reportId: 'first' });
      },
    );
    expect(result).toMatchObject({ state: 'succeeded', stopReason: 'max_depth' });
    expect(dispatches).toHaveLength(2);
    // the first deadline is 90 s after the first dispatch, the second 90 s after the re-dispatch
    // (~60 s later); admissions start ~61, 86, 111 and 136 s in: the last two only by the second
    expect(admits).toEqual(['first', 'again-1', 'again-2', 'again-3']);
  });
});
