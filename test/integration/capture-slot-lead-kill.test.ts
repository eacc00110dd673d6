// Issue 25, the slot lead under a fault: a capture worker killed while captures are handed over
// behind its own (on its own queue, which dies with it) loses none of them. The flow here has no
// capture worker of its own, so the doomed worker is the only one until it holds such a chain;
// then a second joins and the first is killed. A capture on the dead worker's queue is not taken
// within BEHIND_START_TIMEOUT_MS and goes back in line; the one it ran is tried again.
import { describe, expect, it } from 'vitest';
import { startCaptureWorker, type CaptureWorker } from '../../src/flow/capture-worker/worker.ts';
import { archivedUrls, capturesOf } from '../support/crawl-rows.ts';
import { eventually, waitForCrawlEnd } from '../support/crawls.ts';
import { testCaptureWorkerConfig } from '../support/flow.ts';
import { useLiveCrawlStack } from '../support/live-crawl.ts';
import { auditViolations, slotLeadPages, slotLeadStack, startSlotLeadCrawl } from '../support/slot-lead-site.ts';

const s = useLiveCrawlStack(slotLeadStack({ captureWorker: false }));

describe('slot lead: a worker killed with captures handed over behind its own', () => {
  it('the crawl succeeds, every page is archived once, and the pacing audit finds nothing', async () => {
    const workerConfig = (name: string) => testCaptureWorkerConfig(s.config, s.flowQueues, { name, slots: 2 });
    let doomed: CaptureWorker | undefined = await startCaptureWorker({ config: workerConfig('doomed-lead-worker') });
    let survivor: CaptureWorker | undefined;
    try {
      s.flow.setKnobs({ captureDelayMs: 1500 });
      // one slot: the slice hands captures over behind others only then
      const crawlId = await startSlotLeadCrawl(s, 1);
      const worker = doomed;
      // in the middle of a page, after at least one capture was handed over behind another
      await eventually(
        async () => (worker.busy() > 0 && capturesOf(crawlId, worker).some((c) => c.behind === true) ? true : undefined),
        90_000,
        'the doomed worker in a chain of captures handed over behind others',
      );
      const before = capturesOf(crawlId, worker).length;
      survivor = await startCaptureWorker({ config: workerConfig('survivor-lead-worker') });
      await worker.kill();
      doomed = undefined;

      const row = await waitForCrawlEnd(s.tdb.db, crawlId, 200_000);
      expect(row).toMatchObject({ state: 'succeeded', stop_reason: 'max_depth', failure: null });
      const allPages = slotLeadPages(s);
      expect(await archivedUrls(s.tdb.db, crawlId)).toEqual(allPages);
      // the survivor did the rest: what the doomed one had not finished its host's part of
      expect(capturesOf(crawlId, survivor).length).toBeGreaterThanOrEqual(allPages.length - before);
      const pages = await s.tdb.db.selectFrom('crawl_pages').select(['url', 'state']).where('crawl_id', '=', crawlId).execute();
      expect(pages.map((p) => p.state)).toEqual(allPages.map(() => 'captured'));
      expect(await auditViolations(s, crawlId)).toBe(0);
    } finally {
      await doomed?.shutdown();
      await survivor?.shutdown();
    }
  }, 260_000);
});
