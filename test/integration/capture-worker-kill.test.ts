// Issue 25: a capture worker killed in the middle of a page. The flow's process runs no capture
// worker of its own, so the doomed worker is the only one polling until it has pages in hand (had
// a second been polling from the start, it could take every page and leave none to die with:
// cold CI, once). The doomed one is killed then and the survivor started, and the crawl succeeds with
// every page archived once (the survivor captured the dead one's pages again; its half-done
// attempts are never reported) and no pacing gap shorter than its host is owed.
import { describe, expect, it } from 'vitest';
import { startCaptureWorker, type CaptureWorker } from '../../src/flow/capture-worker/worker.ts';
import { archivedUrls, pacingFaults, postCrawl } from '../support/crawl-rows.ts';
import { eventually, waitForCrawlEnd } from '../support/crawls.ts';
import { testCaptureWorkerConfig } from '../support/flow.ts';
import { useLiveCrawlStack } from '../support/live-crawl.ts';
import { FOUR_HOST_ORG as ORG, fourHostCrawl, fourHostPages, fourHostSite } from '../support/four-host-crawl.ts';

const s = useLiveCrawlStack({
  org: ORG,
  hosts: fourHostSite(),
  env: { CAPTURE_LEDGER_LEVEL_LIVENESS_SECONDS: '600' },
  flow: { captureWorker: false },
});

const allPages = (): string[] => fourHostPages(s.site);

const worker = (name: string): Promise<CaptureWorker> => startCaptureWorker({ config: testCaptureWorkerConfig(s.config, s.flowQueues, { name, slots: 4 }) });

describe('a capture worker killed in the middle of a page', () => {
  it('the crawl succeeds and that page is archived once', async () => {
    let doomed: CaptureWorker | undefined = await worker('doomed-worker');
    let survivor: CaptureWorker | undefined;
    try {
      // slow pages, so the doomed worker is caught with pages in hand
      s.flow.setKnobs({ captureDelayMs: 1500 });
      const crawlId = await postCrawl(s.api.url, await s.as('alice', [ORG]), fourHostCrawl(s.site));
      const dying = doomed;
      await eventually(
        async () => (dying.busy() > 0 && Object.values(dying.hostLog.all()).flat().length > 0 ? true : undefined),
        90_000,
        'the doomed worker in the middle of a page',
      );
      const inHand = dying.busy();
      await dying.kill();
      doomed = undefined;
      expect(inHand).toBeGreaterThan(0);
      // started once the doomed one is dead: its pages cannot be finished before the kill
      survivor = await worker('survivor-worker');

      const row = await waitForCrawlEnd(s.tdb.db, crawlId, 200_000);
      expect(row).toMatchObject({ state: 'succeeded', stop_reason: 'max_depth', failure: null });
      // every page archived exactly once, none lost with the worker
      expect(await archivedUrls(s.tdb.db, crawlId)).toEqual(allPages());
      const pages = await s.tdb.db.selectFrom('crawl_pages').select(['url', 'state']).where('crawl_id', '=', crawlId).execute();
      expect(pages.every((p) => p.state === 'captured')).toBe(true);
      expect(await pacingFaults(s.api.url, await s.as('alice', [ORG]), crawlId)).toBe(0);
    } finally {
      await doomed?.shutdown();
      await survivor?.shutdown();
    }
  }, 260_000);
});
