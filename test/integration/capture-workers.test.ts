// Issue 25: capture on many workers, through a worker's death. A 4-host crawl is captured by two
// capture workers on one capture queue: the harness flow's own and a second one in this process.
// Both capture pages, the pacing audit finds no gap shorter than its host is owed, and a worker
// killed in the middle of a page leaves the crawl succeeded with that page archived once (another
// worker captured it again; the dead one's half-done attempt is never reported).
import { describe, expect, it } from 'vitest';
import { startCaptureWorker, type CaptureWorker } from '../../src/flow/capture-worker/worker.ts';
import { archivedUrls, archiveSoftwares, capturesOf, pacingFaults, postCrawl } from '../support/crawl-rows.ts';
import { eventually, waitForCrawlEnd } from '../support/crawls.ts';
import { testCaptureWorkerConfig } from '../support/flow.ts';
import { useLiveCrawlStack } from '../support/live-crawl.ts';
import { linkedPagesSite } from '../support/site.ts';

const ORG = 'acme';
const HOSTS = ['a', 'b', 'c', 'd'];
const PAGES = 4;
const paths = Array.from({ length: PAGES }, (_, i) => `/p${i + 1}`);

const s = useLiveCrawlStack({
  org: ORG,
  hosts: linkedPagesSite(HOSTS, paths),
  env: { CAPTURE_LEDGER_LEVEL_LIVENESS_SECONDS: '600' },
});

const startCrawl = async (): Promise<string> =>
  postCrawl(s.api.url, await s.as('alice', [ORG]), {
    seeds: HOSTS.map((h) => s.site.url(h, '/')),
    maxDepth: 1,
    maxPages: 100,
    perHostDelayMs: 300,
    hostParallelism: 4,
  });

const pacingViolations = async (crawlId: string): Promise<number> => pacingFaults(s.api.url, await s.as('alice', [ORG]), crawlId);

const allPages = (): string[] => HOSTS.flatMap((h) => ['/', ...paths].map((p) => s.site.url(h, p))).sort();

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

  it('a worker killed in the middle of a page: the crawl succeeds and that page is archived once', async () => {
    let doomed: CaptureWorker | undefined = await startCaptureWorker({
      config: testCaptureWorkerConfig(s.config, s.flowQueues, { name: 'doomed-worker', slots: 4 }),
    });
    try {
      // slow pages, so the doomed worker is caught with pages in hand
      s.flow.setKnobs({ captureDelayMs: 1500 });
      const crawlId = await startCrawl();
      const worker = doomed;
      await eventually(
        async () => (worker.busy() > 0 && Object.values(worker.hostLog.all()).flat().length > 0 ? true : undefined),
        90_000,
        'the doomed worker in the middle of a page',
      );
      const inHand = worker.busy();
      await worker.kill();
      doomed = undefined;
      expect(inHand).toBeGreaterThan(0);

      const row = await waitForCrawlEnd(s.tdb.db, crawlId, 200_000);
      expect(row).toMatchObject({ state: 'succeeded', stop_reason: 'max_depth', failure: null });
      // every page archived exactly once, none lost with the worker
      expect(await archivedUrls(s.tdb.db, crawlId)).toEqual(allPages());
      const pages = await s.tdb.db.selectFrom('crawl_pages').select(['url', 'state']).where('crawl_id', '=', crawlId).execute();
      expect(pages.every((p) => p.state === 'captured')).toBe(true);
      expect(await pacingViolations(crawlId)).toBe(0);
    } finally {
      await doomed?.shutdown();
    }
  }, 260_000);
});
