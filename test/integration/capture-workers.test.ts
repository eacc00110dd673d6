// Issue 25: capture on many workers. A 4-host crawl is captured by two capture workers on one
// capture queue: the harness flow's own and a second one in this process. Both capture pages, and
// the pacing audit finds no gap shorter than its host is owed. A worker's death mid-page:
// capture-worker-kill.test.ts.
import { describe, expect, it } from 'vitest';
import { startCaptureWorker } from '../../src/flow/capture-worker/worker.ts';
import { archivedUrls, archiveSoftwares, capturesOf, pacingFaults, postCrawl } from '../support/crawl-rows.ts';
import { waitForCrawlEnd } from '../support/crawls.ts';
import { testCaptureWorkerConfig } from '../support/flow.ts';
import { useLiveCrawlStack } from '../support/live-crawl.ts';
import { FOUR_HOST_ORG as ORG, fourHostCrawl, fourHostPages, fourHostSite } from '../support/four-host-crawl.ts';

const s = useLiveCrawlStack({
  org: ORG,
  hosts: fourHostSite(),
  env: { CAPTURE_LEDGER_LEVEL_LIVENESS_SECONDS: '600' },
});

const startCrawl = async (): Promise<string> => postCrawl(s.api.url, await s.as('alice', [ORG]), fourHostCrawl(s.site));

const pacingViolations = async (crawlId: string): Promise<number> => pacingFaults(s.api.url, await s.as('alice', [ORG]), crawlId);

const allPages = (): string[] => fourHostPages(s.site);

describe('two capture workers on one capture queue', () => {
  it('both capture pages of a 4-host crawl, and the pacing audit finds no violation', async () => {
    const second = await startCaptureWorker({ config: testCaptureWorkerConfig(s.config, s.flowQueues, { name: 'second-worker', slots: 2 }) });
    try {
      s.flow.setKnobs({ captureDelayMs: 400 });
      const crawlId = await startCrawl();
      const row = await waitForCrawlEnd(s.tdb.db, crawlId, 150_000);
      expect(row).toMatchObject({ state: 'succeeded', stop_reason: 'max_depth', failure: null });
      const byFirst = capturesOf(crawlId, s.flow);
      const bySecond = capturesOf(crawlId, second);
      expect(byFirst.length).toBeGreaterThan(0);
      expect(bySecond.length).toBeGreaterThan(0);
      expect(byFirst.length + bySecond.length).toBe(allPages().length);
      expect(await archivedUrls(s.tdb.db, crawlId)).toEqual(allPages());
      expect(await pacingViolations(crawlId)).toBe(0);
      // each manifest names the worker that made it
      const names = new Set(await archiveSoftwares(s.tdb.db, crawlId));
      expect([...names].some((n) => n.includes('(second-worker)'))).toBe(true);
      expect([...names].some((n) => n.includes('(test-capture-worker-'))).toBe(true);
    } finally {
      await second.shutdown();
    }
  }, 200_000);
});
