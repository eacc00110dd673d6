// GET /api/crawl-rules/check, GET /api/crawls/:id/decisions and GET /api/decisions against the
// real Postgres and OpenFGA.
import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import type { Db } from '../../src/db/connect.ts';
import type { DecisionTally } from '../../src/domain/decisions.ts';
import { replaceLevelDecisions } from '../../src/store/decisions.ts';
import { devHeaders, type TestApi } from '../support/api.ts';
import { useHarness } from '../support/harness.ts';

const WEBHOOK = { CAPTURE_LEDGER_CRAWL_WEBHOOK_URL: 'http://127.0.0.1:9/hook', CAPTURE_LEDGER_CRAWL_WEBHOOK_TOKEN: 'test-token' };
const DAY = 24 * 3600 * 1000;

const h = useHarness({
  env: WEBHOOK,
  grants: [
    ['alice', 'submitter', 'acme'],
    ['gina', 'submitter', 'globex'],
  ],
});
let bare: TestApi; // no webhook configured

const alice = devHeaders('alice'); // submitter on acme
const gina = devHeaders('gina'); // submitter on globex
const bob = devHeaders('bob', ['acme']); // a member of acme, with no grant

async function get(base: TestApi, path: string, headers: Record<string, string> = alice) {
  const res = await fetch(`${base.url}${path}`, { headers });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

async function insertCrawl(db: Db, c: { orgId: string; startedAt: Date; seeds?: string[]; rules?: unknown[] }): Promise<string> {
  const row = await db
    .insertInto('crawls')
    .values({
      org_id: c.orgId,
      submitted_by: 'someone',
      state: 'succeeded',
      stop_reason: 'completed',
      seeds: c.seeds ?? ['https://www.example.com/'],
      rules: JSON.stringify(c.rules ?? [{ skip: 'ads.example.com' }, { follow: 'same-site' }]),
      max_depth: 2,
      max_pages: 30,
      per_host_delay_ms: 0,
      host_parallelism: 1,
      formats: ['wacz'],
      started_at: c.startedAt,
      finished_at: new Date(c.startedAt.getTime() + 60_000),
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  return row.id;
}

const tally = (rule: number, action: DecisionTally['action'], hostname: string, links: number, samples: string[] = []): DecisionTally => ({
  rule,
  action,
  hostname,
  links,
  samples,
});

let crawlA: string; // acme, 1 day ago
let crawlB: string; // acme, 10 days ago
let crawlOld: string; // acme, 200 days ago
let crawlG: string; // globex, 2 days ago
let crawlMany: string; // acme, 3 days ago, 501 rows for many.example.net

beforeAll(async () => {
  bare = await h.startApi({ env: { CAPTURE_LEDGER_CRAWL_WEBHOOK_URL: '', CAPTURE_LEDGER_CRAWL_WEBHOOK_TOKEN: '' } });
  const now = Date.now();
  const db = h.tdb.db;
  crawlA = await insertCrawl(db, { orgId: 'acme', startedAt: new Date(now - DAY) });
  crawlB = await insertCrawl(db, { orgId: 'acme', startedAt: new Date(now - 10 * DAY), rules: [{ follow: 'same-origin' }] });
  crawlOld = await insertCrawl(db, { orgId: 'acme', startedAt: new Date(now - 200 * DAY) });
  crawlG = await insertCrawl(db, { orgId: 'globex', startedAt: new Date(now - 2 * DAY) });
  crawlMany = await insertCrawl(db, { orgId: 'acme', startedAt: new Date(now - 3 * DAY) });

  // crawl A: depth 0 reported twice (the second replaces the first), depth 1 once
  await db.transaction().execute(async (trx) => {
    await replaceLevelDecisions(trx, crawlA, 0, [tally(1, 'skip', 'stale.example.com', 99)]);
  });
  await db.transaction().execute(async (trx) => {
    await replaceLevelDecisions(trx, crawlA, 0, [
      tally(1, 'skip', 'ads.example.com', 12, ['https://ads.example.com/1', 'https://ads.example.com/2']),
      tally(2, 'follow', 'www.example.com', 4, ['https://www.example.com/a']),
      tally(0, 'skip', 'other.org', 1, ['https://other.org/']),
      tally(1, 'skip', 'x.ads.example.com', 2, ['https://x.ads.example.com/']),
      tally(2, 'follow', 'badads.example.com', 1, ['https://badads.example.com/']),
    ]);
    await replaceLevelDecisions(trx, crawlA, 1, [
      tally(1, 'skip', 'ads.example.com', 3, ['https://ads.example.com/3']),
      tally(0, 'skip', 'badads.example.com', 5, ['https://badads.example.com/x']),
      tally(0, 'skip', 'a_b.example.com', 1, ['https://a_b.example.com/']),
      tally(0, 'skip', 'axb.example.com', 1, ['https://axb.example.com/']),
    ]);
  });
  await replaceLevelDecisions(db, crawlB, 0, [tally(0, 'skip', 'ads.example.com', 7, ['https://ads.example.com/b'])]);
  await replaceLevelDecisions(db, crawlOld, 0, [tally(1, 'skip', 'ads.example.com', 1, ['https://ads.example.com/old'])]);
  await replaceLevelDecisions(db, crawlG, 0, [tally(1, 'skip', 'ads.example.com', 8, ['https://ads.example.com/g'])]);
  await replaceLevelDecisions(
    db,
    crawlMany,
    0,
    Array.from({ length: 501 }, (_, i) => tally(0, 'skip', `h${String(i).padStart(3, '0')}.many.example.net`, 1)),
  );

  // pages robots.txt kept out of crawl A (and one that was skipped for another reason)
  await db
    .insertInto('crawl_pages')
    .values([
      { crawl_id: crawlA, url: 'https://www.example.com/private', depth: 1, host: 'www.example.com', state: 'skipped', skip_reason: 'robots' },
      { crawl_id: crawlA, url: 'https://www.example.com:8443/p', depth: 1, host: 'www.example.com:8443', state: 'skipped', skip_reason: 'robots' },
      { crawl_id: crawlA, url: 'https://blog.example.com/x', depth: 1, host: 'blog.example.com', state: 'skipped', skip_reason: 'robots' },
      { crawl_id: crawlA, url: 'https://www.example.com/cut', depth: 1, host: 'www.example.com', state: 'skipped', skip_reason: 'max_pages' },
      { crawl_id: crawlA, url: 'https://www.example.com/ok', depth: 1, host: 'www.example.com', state: 'captured' },
    ])
    .execute();
});

describe('GET /api/crawl-rules/check', () => {
  const check = (qs: string, headers: Record<string, string> = alice, base: TestApi = h.api) => get(base, `/api/crawl-rules/check?${qs}`, headers);

  it('answers the spec\u2019s example exactly', async () => {
    const r = await check('seed=https://www.example.com/&rule=follow:same-site&rule=skip:ads.example.com');
    expect(r.status).toBe(200);
    expect(r.body).toEqual({
      seeds: [{ url: 'https://www.example.com/', valid: true, site: 'example.com', followed: true }],
      rules: [
        { rule: 1, action: 'follow', kind: 'scope', pattern: 'same-site' },
        { rule: 2, action: 'skip', kind: 'domain', pattern: 'ads.example.com', coveredBy: 1 },
      ],
      ok: false,
    });
  });

  it('accepts a good list, with URL prefixes shown normalised and rule order kept', async () => {
    const qs = new URLSearchParams([
      ['seed', 'https://www.example.com/'],
      ['seed', 'https://foo.github.io/'],
      ['rule', 'skip:ads.example.com'],
      ['rule', 'skip:HTTPS://WWW.Example.com:443/search?q=a&b=c'],
      ['rule', 'follow:same-site'],
      ['rule', 'capture:any'],
    ]);
    const r = await check(qs.toString());
    expect(r.status).toBe(200);
    expect(r.body).toEqual({
      seeds: [
        { url: 'https://www.example.com/', valid: true, site: 'example.com', followed: true },
        { url: 'https://foo.github.io/', valid: true, site: 'foo.github.io', followed: true },
      ],
      rules: [
        { rule: 1, action: 'skip', kind: 'domain', pattern: 'ads.example.com' },
        { rule: 2, action: 'skip', kind: 'prefix', pattern: 'https://www.example.com/search?q=a&b=c' },
        { rule: 3, action: 'follow', kind: 'scope', pattern: 'same-site' },
        { rule: 4, action: 'capture', kind: 'scope', pattern: 'any' },
      ],
      ok: true,
    });
  });

  it('no rule means the default [{ follow: same-origin }]', async () => {
    const r = await check('seed=https://www.example.com/');
    expect(r.status).toBe(200);
    expect(r.body.rules).toEqual([{ rule: 1, action: 'follow', kind: 'scope', pattern: 'same-origin' }]);
    expect(r.body.ok).toBe(true);
  });

  it('failed checks are 200 with ok:false, naming invalid seeds, invalid patterns and unfollowed seeds', async () => {
    const bad = await check('seed=ftp://x.com/&seed=https://www.example.com/&rule=skip:Ads.Example.com&rule=follow:same-origin');
    expect(bad.status).toBe(200);
    expect(bad.body).toEqual({
      seeds: [
        { url: 'ftp://x.com/', valid: false },
        { url: 'https://www.example.com/', valid: true, site: 'example.com' },
      ],
      rules: [
        { rule: 1, action: 'skip', pattern: 'Ads.Example.com', valid: false, reason: 'host names must be lower-case' },
        { rule: 2, action: 'follow', kind: 'scope', pattern: 'same-origin' },
      ],
      ok: false,
    });
    const unfollowed = await check('seed=https://www.example.com/&rule=capture:same-origin');
    expect(unfollowed.status).toBe(200);
    expect(unfollowed.body.seeds).toEqual([{ url: 'https://www.example.com/', valid: true, site: 'example.com', followed: false }]);
    expect(unfollowed.body.ok).toBe(false);
  });

  it.each([
    ['no seed', 'rule=follow:any'],
    ['an unknown action', 'seed=https://a.com/&rule=jump:any'],
    ['an empty pattern', 'seed=https://a.com/&rule=follow:'],
    ['no colon', 'seed=https://a.com/&rule=follow'],
    ['33 rules', 'seed=https://a.com/&' + Array.from({ length: 33 }, (_, i) => `rule=skip:h${i}.a.com`).join('&')],
    ['a 2049-character pattern', `seed=https://a.com/&rule=skip:https://a.com/${'x'.repeat(2049 - 'https://a.com/'.length)}`],
    ['an empty seed', 'seed='],
  ])('a malformed query (%s) is 400', async (_name, qs) => {
    const r = await check(qs);
    expect(r.status).toBe(400);
    expect(r.body.error).toBe('invalid request');
  });

  it('32 rules and a 2048-character pattern are fine', async () => {
    const rules = [
      `rule=follow:same-origin`,
      ...Array.from({ length: 30 }, (_, i) => `rule=skip:h${i}.b.com`),
      `rule=skip:https://c.com/${'x'.repeat(2048 - 'https://c.com/'.length)}`,
    ];
    const r = await check('seed=https://a.com/&' + rules.join('&'));
    expect(r.status).toBe(200);
    expect((r.body.rules as unknown[]).length).toBe(32);
    expect(r.body.ok).toBe(true);
  });

  it('requires an identity, writes nothing, and exists without the crawl webhook', async () => {
    const before = await h.tdb.db
      .selectFrom('crawls')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow();
    expect((await check('seed=https://a.com/', {})).status).toBe(401);
    const r = await check('seed=https://a.com/', alice, bare);
    expect(r.status).toBe(200);
    expect(r.body.ok).toBe(true);
    const after = await h.tdb.db
      .selectFrom('crawls')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow();
    expect(after.n).toBe(before.n);
  });
});

describe('GET /api/crawls/:id/decisions', () => {
  it('gives a submitter the rules as fixed, the decisions per depth (re-reports replaced) and robots per host name', async () => {
    const r = await get(h.api, `/api/crawls/${crawlA}/decisions`);
    expect(r.status).toBe(200);
    expect(r.body).toEqual({
      rules: [{ skip: 'ads.example.com' }, { follow: 'same-site' }],
      decisions: [
        { depth: 0, rule: 0, action: 'skip', hostname: 'other.org', links: 1, samples: ['https://other.org/'] },
        { depth: 0, rule: 1, action: 'skip', hostname: 'ads.example.com', links: 12, samples: ['https://ads.example.com/1', 'https://ads.example.com/2'] },
        { depth: 0, rule: 1, action: 'skip', hostname: 'x.ads.example.com', links: 2, samples: ['https://x.ads.example.com/'] },
        { depth: 0, rule: 2, action: 'follow', hostname: 'www.example.com', links: 4, samples: ['https://www.example.com/a'] },
        { depth: 0, rule: 2, action: 'follow', hostname: 'badads.example.com', links: 1, samples: ['https://badads.example.com/'] },
        { depth: 1, rule: 0, action: 'skip', hostname: 'badads.example.com', links: 5, samples: ['https://badads.example.com/x'] },
        { depth: 1, rule: 0, action: 'skip', hostname: 'a_b.example.com', links: 1, samples: ['https://a_b.example.com/'] },
        { depth: 1, rule: 0, action: 'skip', hostname: 'axb.example.com', links: 1, samples: ['https://axb.example.com/'] },
        { depth: 1, rule: 1, action: 'skip', hostname: 'ads.example.com', links: 3, samples: ['https://ads.example.com/3'] },
      ],
      robots: [
        { hostname: 'www.example.com', pages: 2, samples: ['https://www.example.com/private', 'https://www.example.com:8443/p'] },
        { hostname: 'blog.example.com', pages: 1, samples: ['https://blog.example.com/x'] },
      ],
      refused: [],
    });
    const rows = await h.tdb.db.selectFrom('crawl_decisions').selectAll().where('crawl_id', '=', crawlA).where('hostname', '=', 'stale.example.com').execute();
    expect(rows).toEqual([]);
  });

  it('is 404 for a member without the grant, another organization\u2019s submitter, and an unknown crawl; 400 for a malformed id; 401 without identity', async () => {
    expect((await get(h.api, `/api/crawls/${crawlA}/decisions`, bob)).status).toBe(404);
    expect((await get(h.api, `/api/crawls/${crawlA}/decisions`, gina)).status).toBe(404);
    expect((await get(h.api, `/api/crawls/${crawlG}/decisions`, gina)).status).toBe(200);
    const unknown = await get(h.api, `/api/crawls/${randomUUID()}/decisions`);
    expect(unknown).toEqual({ status: 404, body: { error: 'not found' } });
    expect((await get(h.api, `/api/crawls/not-a-uuid/decisions`)).status).toBe(400);
    expect((await get(h.api, `/api/crawls/${crawlA}/decisions`, {})).status).toBe(401);
  });

  it('does not exist unless the crawl webhook is configured', async () => {
    expect((await get(bare, `/api/crawls/${crawlA}/decisions`)).status).toBe(404);
    expect((await get(bare, `/api/decisions?domain=ads.example.com`)).status).toBe(404);
  });
});

describe('GET /api/decisions', () => {
  type Row = {
    crawlId: string;
    orgId: string;
    startedAt: string;
    seeds: string[];
    depth: number;
    rule: number;
    action: string;
    pattern: string | null;
    hostname: string;
    links: number;
  };
  const rowsOf = (body: Record<string, unknown>) => body.decisions as Row[];

  it('lists skip decisions for the host and its subdomains at a label boundary, newest crawl first, only the caller\u2019s organizations, last 90 days', async () => {
    const r = await get(h.api, '/api/decisions?domain=ads.example.com');
    expect(r.status).toBe(200);
    expect(r.body.truncated).toBe(false);
    const rows = rowsOf(r.body);
    expect(rows.map((x) => [x.crawlId, x.depth, x.rule, x.hostname, x.links, x.pattern])).toEqual([
      [crawlA, 0, 1, 'ads.example.com', 12, 'ads.example.com'],
      [crawlA, 0, 1, 'x.ads.example.com', 2, 'ads.example.com'],
      [crawlA, 1, 1, 'ads.example.com', 3, 'ads.example.com'],
      [crawlB, 0, 0, 'ads.example.com', 7, null],
    ]);
    expect(rows[0]).toMatchObject({ orgId: 'acme', action: 'skip', seeds: ['https://www.example.com/'] });
    expect(Number.isNaN(Date.parse(rows[0]!.startedAt))).toBe(false);
  });

  it('days widens the window; action filters', async () => {
    const year = rowsOf((await get(h.api, '/api/decisions?domain=ads.example.com&days=365')).body);
    expect(year.map((x) => x.crawlId)).toContain(crawlOld);
    expect(year.at(-1)!.crawlId).toBe(crawlOld);
    const follow = rowsOf((await get(h.api, '/api/decisions?domain=example.com&action=follow')).body);
    expect(follow.map((x) => [x.hostname, x.rule, x.pattern])).toEqual([
      ['www.example.com', 2, 'same-site'],
      ['badads.example.com', 2, 'same-site'],
    ]);
  });

  it('matches host names literally: an underscore is not a wildcard; upper case and a trailing dot are read as the host name', async () => {
    const r = rowsOf((await get(h.api, '/api/decisions?domain=a_b.example.com')).body);
    expect(r.map((x) => x.hostname)).toEqual(['a_b.example.com']);
    const upper = rowsOf((await get(h.api, '/api/decisions?domain=ADS.Example.com.')).body);
    expect(upper.length).toBe(4);
  });

  it('another organization\u2019s submitter sees only theirs; a member without the grant sees nothing', async () => {
    const g = rowsOf((await get(h.api, '/api/decisions?domain=ads.example.com', gina)).body);
    expect(g.map((x) => [x.crawlId, x.orgId, x.links])).toEqual([[crawlG, 'globex', 8]]);
    const b = await get(h.api, '/api/decisions?domain=ads.example.com', bob);
    expect(b).toEqual({ status: 200, body: { decisions: [], truncated: false } });
  });

  it('cuts at 500 rows and says so', async () => {
    const r = await get(h.api, '/api/decisions?domain=many.example.net');
    expect(r.status).toBe(200);
    expect(r.body.truncated).toBe(true);
    expect(rowsOf(r.body)).toHaveLength(500);
    expect(rowsOf(r.body)[0]!.hostname).toBe('h000.many.example.net');
  });

  it.each([['domain=Bad%20Host'], ['domain=example.com/path'], ['domain=*.example.com'], [''], ['domain=a.com&days=0'], ['domain=a.com&action=jump']])(
    '%j is 400',
    async (qs) => {
      const r = await get(h.api, `/api/decisions?${qs}`);
      expect(r.status).toBe(400);
      expect(r.body.error).toBe('invalid request');
    },
  );

  it('requires an identity', async () => {
    expect((await get(h.api, '/api/decisions?domain=ads.example.com', {})).status).toBe(401);
  });
});
