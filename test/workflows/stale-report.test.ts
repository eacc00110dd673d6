// A report admission refuses as stale (StaleReport: a newer report of the level replaced it in the
// store) is superseded, not a failure: the crawl admits the newer report, whether its signal is
// already queued or still on its way. Time skipped; activities are typed recording mocks.
import { randomUUID } from 'node:crypto';
import { ApplicationFailure } from '@temporalio/common';
import { describe, expect, it } from 'vitest';
import type { Activities } from '../../src/activities/index.ts';
import { levelReportedSignal } from '../../src/workflows/messages.ts';
import { NON_RETRYABLE } from '../../temporal.config.ts';
import { admitted, mockWorker, nothingToDeliver, startCrawlWorkflow, untilProgress, useTimeSkippingEnv } from './support.ts';

const t = useTimeSkippingEnv();

const LEVEL_TIMEOUT_S = 1800;

type Admit = Activities['admitLevel'];
type AdmitCall = Parameters<Admit>[0];

/** admitLevel that refuses `staleId` as StaleReport (after `beforeThrow`) and admits every other report. */
function admitRefusing(staleId: string, calls: AdmitCall[], beforeThrow?: () => Promise<void>, maxDepth = 0): Admit {
  return async (input) => {
    calls.push(input);
    if (input.reportId === staleId) {
      await beforeThrow?.();
      throw ApplicationFailure.nonRetryable(`report ${staleId} is no longer level ${input.depth}'s current report`, NON_RETRYABLE.staleReport);
    }
    const nextLevelPages = input.depth < maxDepth ? 1 : 0;
    return admitted({ crawlId: input.crawlId, depth: input.depth, reportId: input.reportId, pages: 2, captured: 2, nextLevelPages });
  };
}

async function run(makeAdmit: (crawlId: string, calls: AdmitCall[]) => Admit, drive: (crawlId: string, calls: AdmitCall[]) => Promise<void>, maxDepth = 0) {
  const crawlId = randomUUID();
  const taskQueue = `stale-report-${randomUUID()}`;
  const calls: AdmitCall[] = [];
  const finishes: { state: string; stopReason: string; failure?: string | null }[] = [];
  const worker = await mockWorker(t.env, taskQueue, {
    beginCrawl: async () => ({ running: true, orgId: 'acme', maxDepth }),
    dispatchLevel: async ({ depth }) => ({ depth, pages: 2, follow: 0, hosts: 1, deadline: (await t.env.currentTimeMs()) + LEVEL_TIMEOUT_S * 1000 }),
    admitLevel: makeAdmit(crawlId, calls),
    deliverTuples: nothingToDeliver,
    finishCrawl: async (f) => {
      finishes.push({ state: f.state, stopReason: f.stopReason, failure: f.failure });
      return { finished: true };
    },
  });
  return worker.runUntil(async () => {
    const handle = await startCrawlWorkflow(t.env, taskQueue, crawlId, LEVEL_TIMEOUT_S);
    await drive(crawlId, calls);
    return { result: await handle.result(), calls, finishes };
  });
}

const report = (crawlId: string, reportId: string, depth = 0) =>
  t.env.client.workflow.getHandle(`crawl-${crawlId}`).signal(levelReportedSignal, { depth, reportId });

/** Waits in real time until the workflow waits for a report of `depth` having tried `admissions` reports. */
const waiting = (crawlId: string, calls: AdmitCall[], admissions: number, depth = 0): Promise<void> =>
  untilProgress(
    t.env,
    crawlId,
    (p) => p?.phase === 'waiting' && p.depth === depth && calls.length === admissions,
    1000,
    (p) => `the workflow never waited after ${admissions} admissions (saw ${calls.length}, phase ${p?.phase})`,
  );

describe('crawl workflow: a stale report is superseded, not a failure (time skipped)', () => {
  it('the newer report signalled while the stale one was being admitted is admitted, and the crawl succeeds', async () => {
    const { result, calls, finishes } = await run(
      (crawlId, calls) => admitRefusing('older', calls, () => report(crawlId, 'newer')),
      async (crawlId, calls) => {
        await waiting(crawlId, calls, 0);
        await report(crawlId, 'older');
      },
    );
    expect(calls.map((c) => [c.reportId, c.expand])).toEqual([
      ['older', true],
      ['newer', true],
    ]);
    expect(result).toMatchObject({ state: 'succeeded', stopReason: 'max_depth', failure: null });
    expect(result.levels[0]).toMatchObject({ depth: 0, reportId: 'newer', captured: 2 });
    expect(finishes).toEqual([{ state: 'succeeded', stopReason: 'max_depth', failure: null }]);
  });

  it('with no newer report queued yet, the workflow waits for it and admits it when it is signalled', async () => {
    const { result, calls, finishes } = await run(
      (_crawlId, calls) => admitRefusing('older', calls),
      async (crawlId, calls) => {
        await waiting(crawlId, calls, 0);
        await report(crawlId, 'older');
        await waiting(crawlId, calls, 1);
        await report(crawlId, 'newer');
      },
    );
    expect(calls.map((c) => c.reportId)).toEqual(['older', 'newer']);
    expect(result).toMatchObject({ state: 'succeeded', stopReason: 'max_depth', failure: null });
    expect(result.levels[0]?.reportId).toBe('newer');
    expect(finishes).toEqual([{ state: 'succeeded', stopReason: 'max_depth', failure: null }]);
  });

  it('a newer report that is never signalled fails the crawl after a level timeout, saying so', async () => {
    const { result, calls, finishes } = await run(
      (_crawlId, calls) => admitRefusing('older', calls),
      async (crawlId, calls) => {
        await waiting(crawlId, calls, 0);
        await report(crawlId, 'older');
      },
    );
    const failure = `level 0: its report was replaced and the newer one was not signalled within ${LEVEL_TIMEOUT_S}s`;
    expect(calls.map((c) => c.reportId)).toEqual(['older']);
    expect(result).toMatchObject({ state: 'failed', stopReason: 'failed', failure });
    expect(finishes).toEqual([{ state: 'failed', stopReason: 'failed', failure }]);
  });

  it('a re-report of an earlier level that is stale when re-admitted is skipped; the crawl goes on', async () => {
    const { result, calls, finishes } = await run(
      (_crawlId, calls) => admitRefusing('r0-replaced', calls, undefined, 1),
      async (crawlId, calls) => {
        await waiting(crawlId, calls, 0);
        await report(crawlId, 'r0');
        await waiting(crawlId, calls, 1, 1);
        await report(crawlId, 'r0-replaced', 0);
        await report(crawlId, 'r1', 1);
      },
      1,
    );
    expect(calls.map((c) => [c.depth, c.reportId, c.expand])).toEqual([
      [0, 'r0', true],
      [1, 'r1', true],
      [0, 'r0-replaced', false],
    ]);
    expect(result).toMatchObject({ state: 'succeeded', stopReason: 'max_depth', failure: null });
    expect(result.levels.map((l) => l.reportId)).toEqual(['r0', 'r1']);
    expect(finishes).toEqual([{ state: 'succeeded', stopReason: 'max_depth', failure: null }]);
  });
});
