// Issue 25, pacing with fewer slots than hosts: the slice hands a capture over behind one in
// flight, to the queue of the worker that runs it, and that worker starts it the moment the one
// ahead ends its host's part (src/flow/capture-worker/lanes.ts), so a slot is not idle for a round
// trip through Temporal after every page. Shown on a real crawl: captures are handed over behind
// others, one slot still means one host at a time as the site saw it, and the pacing audit finds
// nothing. A worker that dies with captures handed over behind its own loses none of them.
import { describe, expect, it } from 'vitest';
import { startCaptureWorker, type CaptureWorker } from '../../src/flow/capture-worker/worker.ts';
import type { HostCapture } from '../../src/flow/level.ts';
import { archivedUrls, postCrawl } from '../support/crawl-rows.ts';
import { eventually, waitForCrawlEnd } from '../support/crawls.ts';
import { testCaptureWorkerConfig } from '../support/flow.ts';
import { useLiveCrawlStack } from '../support/live-crawl.ts';

const ORG = 'acme';
const HOSTS = ['a', 'b', 'c'];
const paths = ['/p1', '/p2', '/p3'];

const s = useLiveCrawlStack({
  org: ORG,
  hosts: Object.fromEntries(
    HOSTS.map((h) => [
      h,
      {
        pages: {
          '/': `<title>${h}</title>${paths.map((p) => `<a href="${p}">${p}</a>`).join(' ')}`,
          ...Object.fromEntries(paths.map((p) => [p, `<title>${h} ${p}</title><p>page ${p} of ${h}</p>`])),
        },
      },
    ]),
  ),
  env: { CAPTURE_LEDGER_LEVEL_LIVENESS_SECONDS: '600' },
});

const startCrawl = async (hostParallelism: number): Promise<string> =>
  postCrawl(s.api.url, await s.as('alice', [ORG]), {
    seeds: HOSTS.map((h) => s.site.url(h, '/')),
    maxDepth: 1,
    maxPages: 100,
    perHostDelayMs: 300,
    hostParallelism,
  });

async function auditViolations(crawlId: string): Promise<number> {
  const res = await fetch(`${s.api.url}/api/crawls/${crawlId}/pacing`, { headers: await s.as('alice', [ORG]) });
  expect(res.status).toBe(200);
  const body = (await res.json()) as { violations: number; hosts: { overlaps: number }[] };
  return body.violations + body.hosts.reduce((n, h) => n + h.overlaps, 0);
}

const allPages = (): string[] => HOSTS.flatMap((h) => ['/', ...paths].map((p) => s.site.url(h, p))).sort();
const capturesOf = (crawlId: string, ...workers: { hostLog: { all(): Record<string, HostCapture[]> } }[]): HostCapture[] =>
  workers.flatMap((w) =>
    Object.values(w.hostLog.all())
      .flat()
      .filter((c) => c.crawlId === crawlId),
  );

describe('slot lead: captures handed over behind others on their worker', () => {
  it('one slot, three hosts: later captures go behind earlier ones, and the site still sees one host at a time', async () => {
    // captures long enough that the slice hears one started well before it ends
    s.flow.setKnobs({ captureDelayMs: 500 });
    const crawlId = await startCrawl(1);
    const row = await waitForCrawlEnd(s.tdb.db, crawlId, 150_000);
    expect(row).toMatchObject({ state: 'succeeded', stop_reason: 'max_depth', failure: null });
    expect(await archivedUrls(s.tdb.db, crawlId)).toEqual(allPages());
    const captures = capturesOf(crawlId, s.flow).sort((x, y) => x.submittedAt - y.submittedAt);
    expect(captures.map((c) => c.url).sort()).toEqual(allPages());
    // the level of 9 pages after the seeds: most are handed over behind the capture before them
    expect(captures.filter((c) => c.behind === true).length).toBeGreaterThanOrEqual(3);
    // one slot: as the hosts felt it, no capture began before the one before it had ended
    for (let i = 1; i < captures.length; i++) expect(captures[i]!.submittedAt).toBeGreaterThanOrEqual(captures[i - 1]!.finishedAt);
    expect(await auditViolations(crawlId)).toBe(0);
  }, 200_000);

  it('a worker killed with captures behind its own: the crawl succeeds and every page is archived once', async () => {
    let doomed: CaptureWorker | undefined = await startCaptureWorker({
      config: testCaptureWorkerConfig(s.config, s.flowQueues, { name: 'doomed-lead-worker', slots: 2 }),
    });
    try {
      s.flow.setKnobs({ captureDelayMs: 1500 });
      const crawlId = await startCrawl(2);
      const worker = doomed;
      // the doomed worker is in the middle of a page, with one handed over behind it
      await eventually(
        async () => (worker.busy() >= 2 && capturesOf(crawlId, worker).length > 0 ? true : undefined),
        90_000,
        'the doomed worker with a capture behind its own',
      );
      await worker.kill();
      doomed = undefined;

      const row = await waitForCrawlEnd(s.tdb.db, crawlId, 200_000);
      expect(row).toMatchObject({ state: 'succeeded', stop_reason: 'max_depth', failure: null });
      expect(await archivedUrls(s.tdb.db, crawlId)).toEqual(allPages());
      const pages = await s.tdb.db.selectFrom('crawl_pages').select(['url', 'state']).where('crawl_id', '=', crawlId).execute();
      expect(pages.every((p) => p.state === 'captured')).toBe(true);
      expect(await auditViolations(crawlId)).toBe(0);
    } finally {
      await doomed?.shutdown();
    }
  }, 260_000);
});
