// A crawl's numbers (issue 13, fixes 1, 2, 3 and 5 for the crawl list) and the crawl routes'
// row-and-decision concurrency (issue 12, deliver 9), on the real Temporal, Postgres, S3 and
// OpenFGA. This file plays the capture flow's part by hand: a report is stored and the workflow
// signalled exactly as the report route does, so what is tested is what the ledger makes of it.
import { describe, expect, it } from 'vitest';
import type { OpenFgaClient } from '@openfga/sdk';
import { crawlWorkflowId } from '../../temporal.config.ts';
import type { PageReport } from '../../src/domain/contract.ts';
import { admitLevel } from '../../src/ledger/admit-level.ts';
import { finishCrawlRow, insertCrawl, upsertLevelReport } from '../../src/store/crawls.ts';
import { levelReportedSignal, type LevelReported } from '../../src/workflows/messages.ts';
import { devHeaders } from '../support/api.ts';
import { levelPrefix, waitForCrawlEnd, writeCapture } from '../support/crawls.ts';
import { useHarness } from '../support/harness.ts';

const ORG = 'acme';
/** every OpenFGA call the API makes goes through the real client; this only counts them */
const fgaCalls: string[] = [];

function counting(fga: OpenFgaClient): OpenFgaClient {
  return new Proxy(fga, {
    get(target, prop, receiver) {
      const v = Reflect.get(target, prop, receiver) as unknown;
      if (typeof v !== 'function') return v;
      return (...args: unknown[]) => {
        fgaCalls.push(String(prop));
        return (v as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
}

const h = useHarness({
  crawls: 'stub',
  env: { CAPTURE_LEDGER_LEVEL_TIMEOUT_SECONDS: '30' },
  apiFga: counting,
  grants: [['alice', 'submitter', ORG]],
});

const alice = devHeaders('alice', [ORG]);

async function startCrawl(body: Record<string, unknown>): Promise<string> {
  const res = await fetch(`${h.api.url}/api/crawls`, { method: 'POST', headers: { ...alice, 'content-type': 'application/json' }, body: JSON.stringify(body) });
  expect(res.status, await res.clone().text()).toBe(202);
  return ((await res.json()) as { crawlId: string }).crawlId;
}

/** What the report route does once it has accepted a report: store it, signal the workflow. */
async function report(crawlId: string, depth: number, pages: PageReport[]): Promise<void> {
  const { reportId } = await upsertLevelReport(h.tdb.db, crawlId, depth, { depth, pages }, 'capture-flow');
  const signal: LevelReported = { depth, reportId };
  await h.temporal.workflow.getHandle(crawlWorkflowId(crawlId)).signal(levelReportedSignal, signal);
}

async function detail(crawlId: string): Promise<Record<string, unknown>> {
  const res = await fetch(`${h.api.url}/api/crawls/${crawlId}`, { headers: alice });
  expect(res.status).toBe(200);
  return (await res.json()) as Record<string, unknown>;
}

/** A running crawl row with its seed page, without the API or a workflow. */
async function insertDirect(orgId: string, seed: string, limits: { maxDepth: number; maxPages: number }): Promise<string> {
  const c = {
    orgId,
    submittedBy: 'alice',
    seeds: [seed],
    rules: [{ follow: 'same-origin' }],
    ...limits,
    perHostDelayMs: 0,
    hostParallelism: 1,
    formats: ['wacz'],
    signing: false,
  };
  return (await insertCrawl(h.tdb.db, { ...c, seedLevel: { take: [seed], cut: [] } })).id;
}

// manifests must be under the prefix the level was dispatched with
const prefix = levelPrefix;

describe('stopReason when maxPages cuts the seeds themselves (fix 1)', () => {
  it('maxDepth 0: max_pages, not max_depth', async () => {
    const crawlId = await startCrawl({ seeds: ['http://s.test/1', 'http://s.test/2', 'http://s.test/3'], maxDepth: 0, maxPages: 2, perHostDelayMs: 0 });
    const d0 = await h.hook.waitFor((d) => d.body.crawlId === crawlId && d.body.depth === 0);
    expect(d0.body.pages.map((p) => p.url)).toEqual(['http://s.test/1', 'http://s.test/2']);
    await report(crawlId, 0, await Promise.all(['1', '2'].map((n) => writeCapture(h.s3, h.bucket, prefix(crawlId, 0), { url: `http://s.test/${n}` }))));
    const row = await waitForCrawlEnd(h.tdb.db, crawlId);
    expect(row).toMatchObject({ state: 'succeeded', stop_reason: 'max_pages' });
    expect(await detail(crawlId)).toMatchObject({ stopReason: 'max_pages', pagesDiscovered: 3, pagesCaptured: 2, pagesSkipped: 1 });
  });

  it('maxDepth 2 and no links found: max_pages, not completed', async () => {
    const crawlId = await startCrawl({ seeds: ['http://t.test/1', 'http://t.test/2'], maxDepth: 2, maxPages: 1, perHostDelayMs: 0 });
    await h.hook.waitFor((d) => d.body.crawlId === crawlId && d.body.depth === 0);
    await report(crawlId, 0, [await writeCapture(h.s3, h.bucket, prefix(crawlId, 0), { url: 'http://t.test/1', links: [] })]);
    expect(await waitForCrawlEnd(h.tdb.db, crawlId)).toMatchObject({ state: 'succeeded', stop_reason: 'max_pages', depth_reached: 0 });
  });
});

describe('pagesDiscovered counts what the rules threw away (fix 2)', () => {
  it('a link skipped by a rule and one no rule matched (rule 0) are discovered, not captured', async () => {
    const crawlId = await startCrawl({
      seeds: ['http://r.test/'],
      rules: [{ skip: 'http://r.test/ads' }, { follow: 'same-origin' }],
      maxDepth: 1,
      perHostDelayMs: 0,
    });
    await h.hook.waitFor((d) => d.body.crawlId === crawlId && d.body.depth === 0);
    const seed = await writeCapture(h.s3, h.bucket, prefix(crawlId, 0), {
      url: 'http://r.test/',
      links: [{ href: '/a' }, { href: '/ads/1' }, { href: 'http://elsewhere.test/' }],
    });
    await report(crawlId, 0, [seed]);
    await h.hook.waitFor((d) => d.body.crawlId === crawlId && d.body.depth === 1);
    await report(crawlId, 1, [await writeCapture(h.s3, h.bucket, prefix(crawlId, 1), { url: 'http://r.test/a' })]);
    expect(await waitForCrawlEnd(h.tdb.db, crawlId)).toMatchObject({ state: 'succeeded', stop_reason: 'max_depth' });
    // the seed and /a were taken; /ads/1 (rule 1) and elsewhere.test (rule 0) were thrown away
    expect(await detail(crawlId)).toMatchObject({ pagesDiscovered: 4, pagesCaptured: 2, pagesSkipped: 0 });
  });

  it('a nav link skipped by a rule on the pages of two levels is discovered once', async () => {
    const crawlId = await startCrawl({
      seeds: ['http://n.test/'],
      rules: [{ skip: 'http://n.test/nav' }, { follow: 'same-origin' }],
      maxDepth: 2,
      perHostDelayMs: 0,
    });
    // on every page: the nav link (rule 1) and an off-site one (rule 0)
    const nav = [{ href: '/nav' }, { href: 'http://away.test/' }];
    await h.hook.waitFor((d) => d.body.crawlId === crawlId && d.body.depth === 0);
    await report(crawlId, 0, [await writeCapture(h.s3, h.bucket, prefix(crawlId, 0), { url: 'http://n.test/', links: [{ href: '/a' }, ...nav] })]);
    await h.hook.waitFor((d) => d.body.crawlId === crawlId && d.body.depth === 1);
    await report(crawlId, 1, [await writeCapture(h.s3, h.bucket, prefix(crawlId, 1), { url: 'http://n.test/a', links: [{ href: '/c' }, ...nav] })]);
    await h.hook.waitFor((d) => d.body.crawlId === crawlId && d.body.depth === 2);
    await report(crawlId, 2, [await writeCapture(h.s3, h.bucket, prefix(crawlId, 2), { url: 'http://n.test/c' })]);
    expect(await waitForCrawlEnd(h.tdb.db, crawlId)).toMatchObject({ state: 'succeeded', stop_reason: 'max_depth' });
    const decisions = (await (await fetch(`${h.api.url}/api/crawls/${crawlId}/decisions`, { headers: alice })).json()) as {
      decisions: { depth: number; action: string; links: number }[];
    };
    // the rules did skip both links at both levels (crawl_decisions counts per level)...
    expect(decisions.decisions.filter((d) => d.action === 'skip').map((d) => [d.depth, d.links])).toEqual([
      [0, 1],
      [0, 1],
      [1, 1],
      [1, 1],
    ]);
    // ...but the crawl discovered 3 pages and 2 skipped URLs, each once
    expect(await detail(crawlId)).toMatchObject({ pagesDiscovered: 5, pagesCaptured: 3, pagesSkipped: 0 });
  });
});

describe('a re-reported level replaces its frontier (fix 3)', () => {
  it('next-level pages only the replaced report introduced are removed, and the cap is applied afresh', async () => {
    const crawlId = await insertDirect('frontier-org', 'https://f.test/', { maxDepth: 2, maxPages: 3 });
    await h.tdb.db.updateTable('crawls').set({ dispatched_depth: 0 }).where('id', '=', crawlId).execute();
    const deps = { db: h.tdb.db, s3: h.s3, bucket: h.bucket };
    const level1 = async () =>
      (
        await h.tdb.db
          .selectFrom('crawl_pages')
          .select(['url', 'state', 'skip_reason'])
          .where('crawl_id', '=', crawlId)
          .where('depth', '=', 1)
          .orderBy('id')
          .execute()
      ).map((p) => `${p.url} ${p.state}${p.skip_reason ? ` ${p.skip_reason}` : ''}`);

    const wide = await writeCapture(h.s3, h.bucket, prefix(crawlId, 0), { url: 'https://f.test/', links: ['/a', '/b', '/c', '/d'].map((href) => ({ href })) });
    await upsertLevelReport(h.tdb.db, crawlId, 0, { depth: 0, pages: [wide] }, 'capture-flow');
    expect(await admitLevel(deps, { crawlId, depth: 0, expand: true })).toMatchObject({ nextLevelPages: 2, cutPages: 2 });
    expect(await level1()).toEqual([
      'https://f.test/a pending',
      'https://f.test/b pending',
      'https://f.test/c skipped max_pages',
      'https://f.test/d skipped max_pages',
    ]);

    // the same level reported again, its page now naming fewer links: /a and /b are gone from it
    const narrow = await writeCapture(h.s3, h.bucket, prefix(crawlId, 0), { url: 'https://f.test/', links: ['/c', '/d'].map((href) => ({ href })) });
    await upsertLevelReport(h.tdb.db, crawlId, 0, { depth: 0, pages: [narrow] }, 'capture-flow');
    expect(await admitLevel(deps, { crawlId, depth: 0, expand: true })).toMatchObject({ nextLevelPages: 2, cutPages: 0, frontierRemoved: 2 });
    expect(await level1()).toEqual(['https://f.test/c pending', 'https://f.test/d pending']);

    // once level 1 is out, a late re-report of level 0 never touches it
    await h.tdb.db.updateTable('crawls').set({ dispatched_depth: 1 }).where('id', '=', crawlId).execute();
    await upsertLevelReport(h.tdb.db, crawlId, 0, { depth: 0, pages: [wide] }, 'capture-flow');
    await admitLevel(deps, { crawlId, depth: 0, expand: false });
    expect(await level1()).toEqual(['https://f.test/c pending', 'https://f.test/d pending']);
    await finishCrawlRow(h.tdb.db, crawlId, { state: 'succeeded', stopReason: 'completed' });
  });
});

describe('GET /api/crawls never skips rows sharing the boundary startedAt (fix 5)', () => {
  it('120 crawls started in one millisecond, paged 50 at a time with before and beforeId: none lost, none repeated', async () => {
    const at = new Date('2026-01-02T03:04:05.678Z');
    const ids: string[] = [];
    for (let i = 0; i < 120; i += 1) {
      const row = await h.tdb.db
        .insertInto('crawls')
        .values({
          org_id: ORG,
          submitted_by: 'alice',
          seeds: ['https://p.test/'],
          rules: '[]',
          max_depth: 0,
          max_pages: 1,
          per_host_delay_ms: 0,
          host_parallelism: 1,
          formats: ['wacz'],
          signing: false,
          state: 'succeeded',
          stop_reason: 'completed',
          started_at: at,
          finished_at: at,
        })
        .returning('id')
        .executeTakeFirstOrThrow();
      ids.push(row.id);
    }
    const page = async (query: string) => {
      const res = await fetch(`${h.api.url}/api/crawls?limit=50&${query}`, { headers: alice });
      expect(res.status, await res.clone().text()).toBe(200);
      return (await res.json()) as { id: string; startedAt: string }[];
    };
    const start = `before=${encodeURIComponent(new Date(at.getTime() + 1).toISOString())}`;
    const seen: string[] = [];
    let query = start;
    for (let n = 0; n < 5; n += 1) {
      const rows = await page(query);
      seen.push(...rows.map((r) => r.id));
      if (rows.length < 50) break;
      const last = rows[rows.length - 1]!;
      expect(last.startedAt).toBe(at.toISOString());
      query = `before=${encodeURIComponent(last.startedAt)}&beforeId=${last.id}`;
    }
    expect(seen).toHaveLength(120);
    expect(new Set(seen)).toEqual(new Set(ids));
    // before alone keeps the spec's meaning: strictly older, so the other 70 are not on its page
    const first = await page(start);
    expect(await page(`before=${encodeURIComponent(first[49]!.startedAt)}`)).toEqual([]);
  });

  it('beforeId without before, or not a UUID, is a 400 that names it', async () => {
    for (const q of ['beforeId=00000000-0000-4000-8000-000000000000', `before=${encodeURIComponent(new Date().toISOString())}&beforeId=nope`]) {
      const res = await fetch(`${h.api.url}/api/crawls?${q}`, { headers: alice });
      expect(res.status).toBe(400);
      expect(await res.text()).toContain('beforeId');
    }
  });
});

describe('crawl routes ask the row and the decision together (issue 12, deliver 9)', () => {
  it('an unknown crawl, a foreign one and your own each cost one OpenFGA question; only your own is 200', async () => {
    const foreign = await insertDirect('elsewhere', 'https://x.test/', { maxDepth: 0, maxPages: 1 });
    await finishCrawlRow(h.tdb.db, foreign, { state: 'succeeded', stopReason: 'completed' });
    const own = (await h.tdb.db.selectFrom('crawls').select('id').where('org_id', '=', ORG).limit(1).executeTakeFirstOrThrow()).id;
    for (const [id, status] of [
      ['00000000-0000-4000-8000-000000000000', 404],
      [foreign, 404],
      [own, 200],
    ] as const) {
      for (const path of [`/api/crawls/${id}`, `/api/crawls/${id}/decisions`]) {
        fgaCalls.length = 0;
        const res = await fetch(`${h.api.url}${path}`, { headers: alice });
        expect(res.status, path).toBe(status);
        expect(fgaCalls, path).toEqual(['listObjects']);
        if (status === 404) expect(await res.json()).toEqual({ error: 'not found' });
      }
    }
  });
});
