// Hostile pages over the real stack (issue 12): the API refuses seeds and targets outside the
// address policy; a crawl of a site whose links, redirects and a rebinding name all aim at a
// listener on 127.0.0.1 never reaches it (not one TCP connection), finishes succeeded and shows
// the refusals in its decisions; and a page with 100,000 links, a Crawl-delay of a day and a
// robots.txt that drips a byte every two seconds all end within the level's deadline with every
// page accounted for.
import { lookup } from 'node:dns/promises';
import { afterAll, describe, expect, it } from 'vitest';
import { runTargets } from '../../src/cli/targets-command.ts';
import { createAddressPolicy } from '../../src/domain/address-policy.ts';
import type { LevelReportBody } from '../../src/domain/contract.ts';
import { finishCrawlRow, insertCrawl } from '../../src/store/crawls.ts';
import { waitForCrawlEnd } from '../support/crawls.ts';
import { hostileHost, listenerUrls, startDripServer, startListener, type DripServer, type Listener } from '../support/hostile-site.ts';
import { useLiveCrawlStack } from '../support/live-crawl.ts';

const ORG = 'hostile';
const LEVEL_TIMEOUT_S = 60;
const BIG_LINKS = 100_000;

let listener: Listener;
let drip: DripServer;
/** where rebind.test first resolves to: an ordinary host on 127.0.0.44 */
let plain: DripServer;
/** lookups of rebind.test: the first (its robots.txt) answers 127.0.0.44, every later one 127.0.0.1 */
let rebindLookups = 0;

// the hostile servers first: the site's pages name their ports
const live = useLiveCrawlStack(async () => {
  [listener, drip, plain] = await Promise.all([startListener(), startDripServer('127.0.0.41'), startDripServer('127.0.0.44', { drip: false })]);
  return {
    org: ORG,
    env: { CAPTURE_LEDGER_LEVEL_TIMEOUT_SECONDS: String(LEVEL_TIMEOUT_S) },
    hosts: {
      hostile: { ...hostileHost(listener.port, { rebindUrl: `http://rebind.test:${new URL(plain.url).port}/page` }), address: '127.0.0.40' },
      big: {
        address: '127.0.0.42',
        pages: {
          '/': `<title>Many links</title>${Array.from({ length: BIG_LINKS }, (_, i) => `<a href="/p${i}">${i}</a>`).join('')}`,
          ...Object.fromEntries(Array.from({ length: 8 }, (_, i) => [`/p${i}`, `<title>p${i}</title>`])),
        },
      },
      slow: {
        address: '127.0.0.43',
        robots: 'User-agent: *\nCrawl-delay: 86400\n',
        pages: { '/': '<title>Slow one</title>', '/2': '<title>Slow two</title>' },
      },
    },
    flow: {
      log: (line) => process.env.CAPTURE_LEDGER_TEST_LOG && console.log(`${new Date().toISOString()} flow ${line.slice(0, 300)}`),
      // a name that rebinds: the address policy must judge the address of every connection
      resolve: async (name) => {
        if (name === 'rebind.test') return ++rebindLookups === 1 ? ['127.0.0.44'] : ['127.0.0.1'];
        return (await lookup(name, { all: true })).map((a) => a.address);
      },
    },
  };
});

afterAll(async () => {
  await Promise.all([drip?.close(), plain?.close(), listener?.close()]);
});

async function post(body: unknown): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetch(`${live.api.url}/api/crawls`, { method: 'POST', headers: await live.as('alice', [ORG]), body: JSON.stringify(body) });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

interface Refused {
  depth: number;
  hostname: string;
  code: string;
  urls: number;
  samples: string[];
}

async function refusedOf(crawlId: string): Promise<Refused[]> {
  const res = await fetch(`${live.api.url}/api/crawls/${crawlId}/decisions`, { headers: await live.as('alice', [ORG]) });
  expect(res.status).toBe(200);
  const body = (await res.json()) as { refused: Refused[]; decisions: { hostname: string }[] };
  for (const d of body.decisions) expect(d.hostname.length).toBeLessThanOrEqual(253);
  return body.refused;
}

describe('seeds and targets outside the address policy', () => {
  it('POST /api/crawls answers 400 naming every refused seed and why, and starts nothing', async () => {
    const urls = listenerUrls(listener.port);
    const fine = live.site.url('hostile', '/fine');
    const seeds = [
      urls.loopback!,
      urls.localhost!,
      urls['ipv6-loopback']!,
      urls['ipv4-mapped']!,
      urls.decimal!,
      urls.metadata!,
      `http://127.0.0.1:${new URL(live.api.config.s3.endpoint).port}/buckets/captures/`,
      fine,
    ];
    const res = await post({ seeds, maxDepth: 0 });
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('seeds outside the address policy');
    const refused = res.body.seeds as { url: string; code: string; problem: string }[];
    expect(refused.map((r) => r.url)).toEqual(seeds.slice(0, -1));
    expect(refused.map((r) => r.code)).toEqual(['address', 'local-name', 'address', 'address', 'address', 'address', 'address']);
    for (const r of refused) expect(r.problem).toContain(r.url);
    expect(await live.tdb.db.selectFrom('crawls').select('id').execute()).toEqual([]);
    expect(listener.connections).toEqual([]);
  });

  it('a target outside the policy is refused by targets add, and by POST fromTargets when it got in anyway', async () => {
    const err: string[] = [];
    const policy = createAddressPolicy(live.api.config.capture.allow, live.api.config.capture.deniedPorts);
    const code = await runTargets(live.tdb.db, ['add', ORG, `http://127.0.0.1:${listener.port}/t`], { out: () => {}, err: (l) => err.push(l) }, policy);
    expect(code).toBe(2);
    expect(err.join('\n')).toContain(`http://127.0.0.1:${listener.port}/t is outside the address policy`);
    // written behind the CLI's back (or before the policy existed)
    await live.tdb.db.insertInto('capture_targets').values({ org_id: ORG, url: `http://169.254.169.254/latest/meta-data/` }).execute();
    const res = await post({ fromTargets: { limit: 10 } });
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('targets outside the address policy');
    expect((res.body.seeds as { url: string }[]).map((s) => s.url)).toEqual(['http://169.254.169.254/latest/meta-data/']);
    await live.tdb.db.deleteFrom('capture_targets').execute();
  });

  it('20,000 seed rows go in (in chunks under the bind-parameter limit)', async () => {
    const seeds = Array.from({ length: 20_000 }, (_, i) => `https://t${i}.example/`);
    const crawl = await insertCrawl(live.tdb.db, {
      orgId: 'bulk',
      submittedBy: 'alice',
      seeds,
      rules: [{ follow: 'same-origin' }],
      maxDepth: 0,
      maxPages: 20_000,
      perHostDelayMs: 2000,
      hostParallelism: 4,
      formats: ['wacz'],
      signing: false,
      seedLevel: { take: seeds, cut: [] },
    });
    const n = await live.tdb.db
      .selectFrom('crawl_pages')
      .select((eb) => eb.fn.countAll<string>().as('n'))
      .where('crawl_id', '=', crawl.id)
      .executeTakeFirstOrThrow();
    expect(Number(n.n)).toBe(20_000);
    await finishCrawlRow(live.tdb.db, crawl.id, { state: 'failed', stopReason: 'failed', failure: 'test: rows only' });
  });
});

describe('a crawl of a hostile site', () => {
  it('never connects to the listener, finishes succeeded, and shows the refusals in its decisions', async () => {
    const home = live.site.url('hostile', '/');
    const res = await post({ seeds: [home], maxDepth: 1, maxPages: 30, perHostDelayMs: 100, rules: [{ follow: 'any' }] });
    expect(res.status).toBe(202);
    const crawlId = res.body.crawlId as string;
    const row = await waitForCrawlEnd(live.tdb.db, crawlId, 120_000);
    expect(row).toMatchObject({ state: 'succeeded', failure: null });

    expect(listener.connections).toEqual([]);

    const pages = await live.tdb.db.selectFrom('crawl_pages').select(['url', 'depth', 'state']).where('crawl_id', '=', crawlId).execute();
    const byUrl = new Map(pages.map((p) => [p.url, p]));
    // nothing aimed at the listener became a page; the long host never reached a table
    for (const p of pages) {
      expect(new URL(p.url).hostname.length).toBeLessThanOrEqual(253);
      expect(p.url).not.toMatch(/127\.0\.0\.1|localhost|\[::|169\.254|2130706433|0x7f/);
    }
    expect(byUrl.get(home)).toMatchObject({ depth: 0, state: 'captured' });
    expect(byUrl.get(live.site.url('hostile', '/fine'))).toMatchObject({ depth: 1, state: 'captured' });
    // the redirects to the listener and the rebinding name: fetched up to the refusal, not beyond
    for (const u of [live.site.url('hostile', '/go'), live.site.url('hostile', '/go-mapped')]) expect(byUrl.get(u)?.state, u).toBe('failed');
    const rebind = pages.find((p) => p.url.startsWith('http://rebind.test:'));
    expect(rebind?.state).toBe('failed');
    expect(rebindLookups).toBeGreaterThanOrEqual(2);
    // robots.txt was asked for and redirected toward the listener; the hop was refused
    expect(live.site.log.filter((r) => r.name === 'hostile' && r.path === '/robots.txt').map((r) => r.status)).toContain(302);

    const refused = await refusedOf(crawlId);
    for (const r of refused) expect(r.hostname.length).toBeLessThanOrEqual(253);
    const atLinks = refused.filter((r) => r.depth === 0);
    const codes = new Set(atLinks.map((r) => r.code));
    expect([...codes].sort()).toEqual(expect.arrayContaining(['address', 'local-name']));
    const hosts = new Set(atLinks.map((r) => r.hostname));
    for (const h of ['127.0.0.1', 'localhost', 'api.localhost', '[::1]', '169.254.169.254']) expect(hosts, h).toContain(h);
    // /seed, and /x under four spellings (plain, decimal, hex, 127.1) that parse to one URL
    expect(atLinks.find((r) => r.hostname === '127.0.0.1' && r.code === 'address')!.urls).toBe(2);
    // the pages the flow refused to fetch (a redirect hop, a name that now resolves to 127.0.0.1)
    const atFetch = refused.filter((r) => r.code === 'fetch-refused');
    expect(atFetch.map((r) => r.hostname)).toContain('rebind.test');
    expect(listener.connections).toEqual([]);
  }, 180_000);
});

describe('a page with 100,000 links, Crawl-delay: 86400 and a dripping robots.txt', () => {
  it('each ends within the level deadline, and every page is accounted for', async () => {
    const seeds = [live.site.url('big', '/'), live.site.url('slow', '/'), live.site.url('slow', '/2'), `${drip.url}/`];
    const started = Date.now();
    const res = await post({ seeds, maxDepth: 1, maxPages: 8, perHostDelayMs: 100, hostParallelism: 4, rules: [{ follow: 'same-origin' }] });
    expect(res.status).toBe(202);
    const crawlId = res.body.crawlId as string;
    const row = await waitForCrawlEnd(live.tdb.db, crawlId, 3 * LEVEL_TIMEOUT_S * 1000);
    expect(row).toMatchObject({ state: 'succeeded', failure: null });
    // two levels, each within its deadline
    expect(Date.now() - started).toBeLessThan(2 * LEVEL_TIMEOUT_S * 1000);

    const pages = await live.tdb.db.selectFrom('crawl_pages').select(['url', 'depth', 'state', 'skip_reason']).where('crawl_id', '=', crawlId).execute();
    const byUrl = new Map(pages.map((p) => [p.url, p]));
    expect(pages.filter((p) => p.state === 'pending')).toEqual([]);
    // the big page is captured: Chromium lays it out with a break opportunity everywhere once it
    // is past the links cap (src/flow/browser/layout-guard.ts), so it no longer takes minutes
    const big = byUrl.get(live.site.url('big', '/'));
    expect(big?.state).toBe('captured');
    expect(byUrl.get(`${drip.url}/`)?.state).toBe('captured');
    // one capture of the slow host; the second could not start before the deadline
    const slow = [byUrl.get(live.site.url('slow', '/'))?.state, byUrl.get(live.site.url('slow', '/2'))?.state].sort();
    expect(slow).toEqual(['captured', 'failed']);
    const report = await live.tdb.db
      .selectFrom('crawl_level_reports')
      .select('body')
      .where('crawl_id', '=', crawlId)
      .where('depth', '=', 0)
      .executeTakeFirstOrThrow();
    const failedSlow = (report.body as LevelReportBody).pages.find((p) => p.url.startsWith(live.site.url('slow', '/')) && p.status === 'failed');
    expect(failedSlow?.manifestError).toMatch(/cannot start before the level's deadline/);
    // the dripping robots.txt was given up on at its own deadline, not the level's
    expect(drip.robots.length).toBeGreaterThanOrEqual(1);
    expect(drip.robots[0]!.closedAt! - drip.robots[0]!.startedAt).toBeLessThan(20_000);

    // level 1: the budget's four pages of the big host, the next thousand kept as cut rows; the
    // links past the 10,000 a page keeps are counted
    const level1 = pages.filter((p) => p.depth === 1);
    expect(level1.filter((p) => p.skip_reason !== 'max_pages')).toHaveLength(4);
    expect(level1.filter((p) => p.skip_reason === 'max_pages')).toHaveLength(1000);
    const refused = await refusedOf(crawlId);
    expect(refused).toContainEqual(expect.objectContaining({ depth: 0, hostname: '127.0.0.42', code: 'too-many-links', urls: BIG_LINKS - 10_000 }));
  }, 240_000);
});
