// Crawl-delay is kept by the ledger, not only by the flow that learnt it (issue 13, Fix 4): a
// site says "Crawl-delay: 1" (longer than the crawl's perHostDelayMs), the capture flow is
// stopped after reporting level 0 and a fresh one — which has never read that robots.txt and
// remembers no finish — captures level 1. The level-1 dispatch carries notBefore = last finish +
// 1 s, and every gap on the host stays ≥ 1 s, by the ledger's pacing query and by the site's log.
import { describe, expect, it } from 'vitest';
import { pacingGaps } from '../../src/store/pages.ts';
import { waitForCrawlEnd } from '../support/crawls.ts';
import { useHarness } from '../support/harness.ts';

const ORG = 'acme';
const CRAWL_DELAY_MS = 1000;
const PER_HOST_DELAY_MS = 100;

const h = useHarness({
  issuer: true,
  crawls: 'stub',
  site: {
    hosts: {
      d: {
        robots: `User-agent: *\nCrawl-delay: ${CRAWL_DELAY_MS / 1000}\n`,
        pages: {
          '/': '<title>D</title><a href="/a">a</a> <a href="/b">b</a>',
          '/a': '<title>D a</title>',
          '/b': '<title>D b</title>',
        },
      },
    },
  },
  env: { CAPTURE_LEDGER_LEVEL_TIMEOUT_SECONDS: '90' },
  grants: [['alice', 'submitter', ORG]],
});

describe('Crawl-delay across a restart of the capture flow', () => {
  it('the flow restarted between levels with Crawl-delay 1 s: the gaps stay ≥ 1 s', async () => {
    h.site.clearLog();
    const first = await h.startFlow();
    // level 1 is held at the relay until the first flow is gone and a fresh one is listening
    let restarted!: () => void;
    const ready = new Promise<void>((resolve) => (restarted = resolve));
    h.hook.relay = { to: first.webhookUrl, hold: async (d) => (d.body.depth === 1 ? ready : undefined) };

    const res = await fetch(`${h.api.url}/api/crawls`, {
      method: 'POST',
      headers: await h.as('alice', [ORG]),
      body: JSON.stringify({ seeds: [h.site.url('d', '/')], maxDepth: 1, perHostDelayMs: PER_HOST_DELAY_MS, hostParallelism: 1 }),
    });
    expect(res.status).toBe(202);
    const { crawlId } = (await res.json()) as { crawlId: string };

    const level0 = await first.waitForLevel(crawlId, 0, 60_000);
    expect(level0.state).toBe('reported');
    const host = h.site.hosts.d!.host;
    // the report said which delay the flow kept on the host
    expect(level0.report!.hosts).toEqual([{ host, delayMs: CRAWL_DELAY_MS, lastFinishedAt: level0.report!.pages[0]!.finishedAt }]);
    await first.close();
    const second = await h.startFlow();
    h.hook.relay.to = second.webhookUrl;
    restarted();

    const row = await waitForCrawlEnd(h.tdb.db, crawlId, 90_000);
    expect(row).toMatchObject({ state: 'succeeded', stop_reason: 'max_depth', failure: null });

    // the ledger kept the effective delay and the last finish, and the dispatch carried them
    const kept = await h.tdb.db.selectFrom('crawl_hosts').selectAll().where('crawl_id', '=', crawlId).execute();
    expect(kept).toHaveLength(1);
    expect(kept[0]).toMatchObject({ host, effective_delay_ms: CRAWL_DELAY_MS });
    const lastFinish0 = Date.parse(level0.report!.pages[0]!.finishedAt!);
    const d1 = h.hook.dispatches.find((d) => d.body.crawlId === crawlId && d.body.depth === 1)!;
    expect(d1.body.notBefore).toEqual({ [host]: new Date(lastFinish0 + CRAWL_DELAY_MS).toISOString() });
    expect((await second.waitForLevel(crawlId, 1, 30_000)).state).toBe('reported');

    const pages = await h.tdb.db.selectFrom('crawl_pages').select(['url', 'state']).where('crawl_id', '=', crawlId).orderBy('url').execute();
    expect(pages.map((p) => p.state)).toEqual(['captured', 'captured', 'captured']);
    // the spec's pacing query: every gap on the host at least the Crawl-delay
    const gaps = (await pacingGaps(h.tdb.db, crawlId)).filter((g) => g.prevFinishedAt !== null);
    expect(gaps).toHaveLength(2);
    for (const g of gaps) expect(g.gapMs!).toBeGreaterThanOrEqual(CRAWL_DELAY_MS);
    // and what the site itself saw: each page request at least 1 s after the previous one ended
    const requests = h.site.pageRequests('d').filter((r) => ['/', '/a', '/b'].includes(r.path));
    expect(requests.map((r) => r.path).sort()).toEqual(['/', '/a', '/b']);
    for (let i = 1; i < requests.length; i += 1) expect(requests[i]!.startedAt - requests[i - 1]!.finishedAt).toBeGreaterThanOrEqual(CRAWL_DELAY_MS);
  });
});
