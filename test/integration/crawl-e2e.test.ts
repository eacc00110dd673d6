// End to end over the real stack: a multi-host test site on several 127.0.0.x addresses, the
// API (JWTs from the dev issuer), the crawl workflow on a real worker, the reference capture
// flow capturing for real and reporting with its own JWT, admission into the ledger, tuples in
// OpenFGA — and the spec's pacing query over crawl_pages.
import { describe, expect, it } from 'vitest';
import { runTargets } from '../../src/cli/targets-command.ts';
import { pacingGaps } from '../../src/store/pages.ts';
import { outboxDrained } from '../support/outbox.ts';
import { waitForCrawlEnd } from '../support/crawls.ts';
import { useLiveCrawlStack } from '../support/live-crawl.ts';

const ORG = 'acme';
const DELAY = 400;
// long enough for a loaded machine's flow to capture and report a level; the lost-level test waits it out
const LEVEL_TIMEOUT_S = 20;

const h = useLiveCrawlStack({
  org: ORG,
  hosts: {
    a: {
      robots: 'User-agent: *\nDisallow: /private\n',
      pages: {
        '/': '<title>A home</title><a href="/a1">a1</a> <a href="/a2">a2</a> <a href="/private">p</a> <a href="/nf" rel="nofollow">nf</a> <a href="{{b}}/">b</a> <a href="{{c}}/">c</a>',
        '/a1': '<title>A one</title><p>first page</p><a href="/a3">a3</a> <a href="{{b}}/b1">b1</a>',
        '/a2': '<title>A two</title><a href="/go">go</a>',
        '/a3': '<title>A three</title><a href="/a4">a4</a>',
        '/a4': '<title>A four</title>',
        '/go': { redirect: '{{b}}/landing' },
        '/private': '<title>secret</title>',
        '/nf': '<title>nofollow</title>',
      },
    },
    b: {
      pages: {
        '/': '<title>B home</title><a href="/b1">b1</a> <a href="/b2">b2</a>',
        '/b1': '<title>B one</title>',
        '/b2': '<title>B two</title>',
        '/landing': '<title>Landed</title>',
      },
      delayMs: 30,
    },
    c: { pages: { '/': '<title>C</title>' } },
  },
  env: { CAPTURE_LEDGER_LEVEL_TIMEOUT_SECONDS: String(LEVEL_TIMEOUT_S) },
});

async function startCrawl(body: unknown): Promise<{ status: number; crawlId?: string; body: Record<string, unknown> }> {
  const res = await fetch(`${h.api.url}/api/crawls`, { method: 'POST', headers: await h.as('alice', [ORG]), body: JSON.stringify(body) });
  const json = (await res.json()) as Record<string, unknown>;
  return { status: res.status, crawlId: json.crawlId as string | undefined, body: json };
}

async function detail(crawlId: string): Promise<Record<string, unknown>> {
  const res = await fetch(`${h.api.url}/api/crawls/${crawlId}`, { headers: await h.as('alice', [ORG]) });
  expect(res.status).toBe(200);
  return (await res.json()) as Record<string, unknown>;
}

describe('a crawl over a real multi-host site', () => {
  it('maxDepth 2: api → workflow → flow → admission, with the right counts, visibility and pacing', async () => {
    h.site.clearLog();
    const started = await startCrawl({ seeds: [h.site.url('a', '/'), h.site.url('b', '/')], maxDepth: 2, perHostDelayMs: DELAY, hostParallelism: 2 });
    expect(started.status).toBe(202);
    const crawlId = started.crawlId!;
    const row = await waitForCrawlEnd(h.tdb.db, crawlId, 90_000);
    expect(row).toMatchObject({ state: 'succeeded', stop_reason: 'max_depth', depth_reached: 2, failure: null });

    const pages = await h.tdb.db
      .selectFrom('crawl_pages')
      .select(['url', 'depth', 'state', 'skip_reason', 'final_url', 'task_id'])
      .where('crawl_id', '=', crawlId)
      .orderBy('depth')
      .orderBy('url')
      .execute();
    const byUrl = new Map(pages.map((p) => [p.url, p]));
    // depth 0: the seeds; depth 1: what they link to (same origin as a seed, nofollow and c left
    // out, b/ deduplicated); depth 2: what depth 1 links to, not read any further
    expect(pages.map((p) => [p.url, p.depth]).sort()).toEqual(
      [
        [h.site.url('a', '/'), 0],
        [h.site.url('b', '/'), 0],
        [h.site.url('a', '/a1'), 1],
        [h.site.url('a', '/a2'), 1],
        [h.site.url('a', '/private'), 1],
        [h.site.url('b', '/b1'), 1],
        [h.site.url('b', '/b2'), 1],
        [h.site.url('a', '/a3'), 2],
        [h.site.url('a', '/go'), 2],
      ].sort(),
    );
    expect(byUrl.get(h.site.url('a', '/private'))).toMatchObject({ state: 'skipped', skip_reason: 'robots', task_id: null });
    // the redirect was followed and recorded
    expect(byUrl.get(h.site.url('a', '/go'))).toMatchObject({ state: 'captured', final_url: h.site.url('b', '/landing') });
    expect(pages.filter((p) => p.state === 'captured')).toHaveLength(8);
    expect(byUrl.has(h.site.url('a', '/a4'))).toBe(false);
    expect(byUrl.has(h.site.url('a', '/nf'))).toBe(false);

    const d = await detail(crawlId);
    // discovered: the nine pages and c/, which no rule took (rule 0)
    expect(d).toMatchObject({
      state: 'succeeded',
      stopReason: 'max_depth',
      pagesDiscovered: 10,
      pagesCaptured: 8,
      pagesSkipped: 1,
      depthReached: 2,
      waczCount: 8,
    });

    // the archives: one per captured page, visible to the submitter and the organization's
    // members, and to nobody else
    const archiveIds = (
      await h.tdb.db
        .selectFrom('archives')
        .innerJoin('crawl_pages', 'crawl_pages.task_id', 'archives.task_id')
        .select('archives.id')
        .where('crawl_pages.crawl_id', '=', crawlId)
        .execute()
    )
      .map((r) => r.id)
      .sort();
    expect(archiveIds).toHaveLength(8);
    // with those of the organization's (alice's) other crawls, when another test ran first
    const orgArchiveIds = (
      await h.tdb.db
        .selectFrom('archives')
        .innerJoin('crawl_pages', 'crawl_pages.task_id', 'archives.task_id')
        .innerJoin('crawls', 'crawls.id', 'crawl_pages.crawl_id')
        .select('archives.id')
        .where('crawls.org_id', '=', ORG)
        .execute()
    )
      .map((r) => r.id)
      .sort();
    expect(orgArchiveIds).toEqual(expect.arrayContaining(archiveIds));
    await outboxDrained(h.tdb.db);
    const visible = async (subject: string, orgs: string[]) => {
      const res = await fetch(`${h.api.url}/api/archives?limit=200`, { headers: await h.as(subject, orgs) });
      expect(res.status).toBe(200);
      return ((await res.json()) as { id: string }[]).map((a) => a.id).sort();
    };
    expect(await visible('alice', [ORG])).toEqual(orgArchiveIds);
    expect(await visible('alice', [])).toEqual(orgArchiveIds); // the owner, even without the membership claim
    expect(await visible('bob', [ORG])).toEqual(orgArchiveIds); // a member without any grant
    expect(await visible('mallory', ['other'])).toEqual([]);
    expect(await visible('capture-flow', ['other'])).toEqual([]);
    const sign = async (subject: string, orgs: string[]) =>
      (await fetch(`${h.api.url}/api/archives/${archiveIds[0]}/url`, { method: 'POST', headers: await h.as(subject, orgs), body: '{}' })).status;
    expect(await sign('bob', [ORG])).toBe(200);
    expect(await sign('mallory', ['other'])).toBe(404);

    // the spec's pacing query: every same-host gap at least perHostDelayMs, none negative
    const gaps = (await pacingGaps(h.tdb.db, crawlId)).filter((g) => g.gapMs !== null);
    expect(gaps.length).toBeGreaterThanOrEqual(5);
    for (const g of gaps) {
      expect(g.gapMs!, `${g.host} ${g.prevFinishedAt?.toISOString()} → ${g.submittedAt?.toISOString()}`).toBeGreaterThanOrEqual(DELAY);
    }
    // and what the other end felt: no overlapping requests on one host, spacing held across levels
    for (const name of ['a', 'b']) {
      for (const g of h.site.gaps(name)) expect(g.gapMs, `${name}: ${g.prev.path} → ${g.next.path}`).toBeGreaterThanOrEqual(DELAY);
    }
    expect(h.site.maxConcurrentHosts()).toBeLessThanOrEqual(2);
    expect(h.site.pageRequests('c')).toEqual([]);

    // what the rules decided at level 0 is recorded
    const decisions = await h.tdb.db
      .selectFrom('crawl_decisions')
      .select(['depth', 'rule', 'action', 'hostname', 'links'])
      .where('crawl_id', '=', crawlId)
      .where('depth', '=', 0)
      .orderBy('rule')
      .orderBy('hostname')
      .execute();
    expect(decisions.find((x) => x.rule === 0)).toMatchObject({ action: 'skip', hostname: h.site.hosts.c!.address, links: 1 });
  }, 120_000);

  it('fromTargets ends in max_depth', async () => {
    const io = { out: () => {}, err: () => {} };
    for (const p of ['/a2', '/b2']) expect(await runTargets(h.tdb.db, ['add', ORG, h.site.url(p === '/a2' ? 'a' : 'b', p)], io)).toBe(0);
    const started = await startCrawl({ fromTargets: {}, perHostDelayMs: 0 });
    expect(started.status).toBe(202);
    const row = await waitForCrawlEnd(h.tdb.db, started.crawlId!, 60_000);
    expect(row).toMatchObject({ state: 'succeeded', stop_reason: 'max_depth', max_depth: 0 });
    expect(await detail(started.crawlId!)).toMatchObject({ pagesDiscovered: 2, pagesCaptured: 2, waczCount: 2 });
  }, 90_000);

  it('409 while a crawl runs', async () => {
    h.flow.setKnobs({ captureDelayMs: 1500 });
    const first = await startCrawl({ seeds: [h.site.url('c', '/')], maxDepth: 0, perHostDelayMs: 0 });
    expect(first.status).toBe(202);
    const second = await startCrawl({ seeds: [h.site.url('b', '/')], maxDepth: 0 });
    expect(second).toEqual({ status: 409, crawlId: undefined, body: { error: 'a crawl is already running' } });
    expect(await waitForCrawlEnd(h.tdb.db, first.crawlId!, 60_000)).toMatchObject({ state: 'succeeded' });
    const third = await startCrawl({ seeds: [h.site.url('b', '/')], maxDepth: 0, perHostDelayMs: 0 });
    expect(third.status).toBe(202);
    await waitForCrawlEnd(h.tdb.db, third.crawlId!, 60_000);
  }, 90_000);

  it('a level whose report is lost fails the crawl, and the next crawl starts', async () => {
    h.flow.setKnobs({ dropReportDepths: [0] });
    const lost = await startCrawl({ seeds: [h.site.url('c', '/')], maxDepth: 1, perHostDelayMs: 0 });
    expect(lost.status).toBe(202);
    const row = await waitForCrawlEnd(h.tdb.db, lost.crawlId!, (LEVEL_TIMEOUT_S + 20) * 1000);
    expect(row).toMatchObject({ state: 'failed', stop_reason: 'failed', failure: `level 0 was not reported within ${LEVEL_TIMEOUT_S}s` });
    expect(await detail(lost.crawlId!)).toMatchObject({ stopReason: 'failed', pagesCaptured: 0 });
    h.flow.setKnobs({});
    const next = await startCrawl({ seeds: [h.site.url('c', '/')], maxDepth: 0, perHostDelayMs: 0 });
    expect(next.status).toBe(202);
    expect(await waitForCrawlEnd(h.tdb.db, next.crawlId!, 60_000)).toMatchObject({ state: 'succeeded', stop_reason: 'max_depth' });
  }, 90_000);
});
