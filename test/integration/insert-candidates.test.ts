// A first next level lands chunk by chunk, already cut at the page budget (insertCandidates with a
// budget), against the real Postgres: the rows it leaves are exactly those of inserting every
// candidate and cutting the level afterwards, and rows past the slots are written once, never
// inserted pending and then updated.
import fc from 'fast-check';
import { sql } from 'kysely';
import { beforeAll, describe, expect, it } from 'vitest';
import type { Queryable } from '../../src/db/connect.ts';
import { CANDIDATE_SPLITS, insertCandidates, type Candidate } from '../../src/store/pages.ts';
import { insertTestCrawl } from '../support/crawl-rows.ts';
import type { TestDatabase } from '../support/db.ts';
import { useHarness } from '../support/harness.ts';

const h = useHarness({ api: false });
let tdb: TestDatabase;
beforeAll(() => {
  ({ tdb } = h);
});

const page = (path: string): Candidate => ({ url: `https://a.test/${path}`, host: 'a.test', action: 'follow' });

/** The crawl's depth-1 rows in the order they landed: url and whether the cap cut them. */
const levelOne = (db: Queryable, crawlId: string) =>
  sql<{ url: string; state: string; skip_reason: string | null }>`
    SELECT url, state, skip_reason FROM crawl_pages WHERE crawl_id = ${crawlId} AND depth = 1 ORDER BY id
  `
    .execute(db)
    .then((r) => r.rows);

/** Row updates of crawl_pages counted so far by this backend (its pending statistics: compare two readings in one transaction). */
const updatesSoFar = (db: Queryable) =>
  sql<{ n: string }>`SELECT pg_stat_get_xact_tuples_updated('crawl_pages'::regclass) AS n`.execute(db).then((r) => Number(r.rows[0]!.n));

/** Lands `chunks` in order as admission does (each with the budget the ones before left), in one transaction. */
async function land(crawlId: string, chunks: Candidate[][], slots: number) {
  return tdb.db.transaction().execute(async (trx) => {
    const before = await updatesSoFar(trx);
    const landed = { kept: 0, cut: 0 };
    for (const chunk of chunks) {
      const r = await insertCandidates(trx, crawlId, 1, chunk, { placed: landed.kept + landed.cut, slots });
      landed.kept += r.kept;
      landed.cut += r.cut;
    }
    return { landed, rows: await levelOne(trx, crawlId), updates: (await updatesSoFar(trx)) - before };
  });
}

const pending = (url: string) => ({ url, state: 'pending', skip_reason: null });
const cut = (url: string) => ({ url, state: 'skipped', skip_reason: 'max_pages' });

describe('insertCandidates with a budget', () => {
  it('rows past the slots land already cut: each written once, none updated', async () => {
    const crawlId = await insertTestCrawl(tdb.db, { maxPages: 10 });
    const r = await land(crawlId, [['n1', 'n2', 'n3'].map(page), ['n4', 'n5'].map(page)], 2);
    expect(r.landed).toEqual({ kept: 2, cut: 3 });
    expect(r.rows).toEqual([
      pending('https://a.test/n1'),
      pending('https://a.test/n2'),
      cut('https://a.test/n3'),
      cut('https://a.test/n4'),
      cut('https://a.test/n5'),
    ]);
    expect(r.updates).toBe(0);
  });

  it('a chunk that straddles the slots: URLs already pages of the crawl take no place, the next ones fill the slots in order', async () => {
    const crawlId = await insertTestCrawl(tdb.db, { seeds: ['https://a.test/', 'https://a.test/n2'], maxPages: 10 });
    const r = await land(crawlId, [['n1', 'n2', 'n3', 'n4', 'n5'].map(page)], 3);
    expect(r.landed).toEqual({ kept: 3, cut: 1 });
    expect(r.rows).toEqual([pending('https://a.test/n1'), pending('https://a.test/n3'), pending('https://a.test/n4'), cut('https://a.test/n5')]);
    expect(r.updates).toBe(0);
  });

  it(`after ${CANDIDATE_SPLITS} splits that each met only pages already taken, the rest lands pending and what is past the slots is cut after`, async () => {
    const taken = ['n1', 'n2', 'n3', 'n4', 'n5'].map((p) => `https://a.test/${p}`);
    const crawlId = await insertTestCrawl(tdb.db, { seeds: ['https://a.test/', ...taken], maxPages: 10 });
    const r = await land(crawlId, [['n1', 'n2', 'n3', 'n4', 'n5', 'n6', 'n7'].map(page)], 1);
    expect(r.landed).toEqual({ kept: 1, cut: 1 });
    expect(r.rows).toEqual([pending('https://a.test/n6'), cut('https://a.test/n7')]);
    expect(r.updates).toBe(1);
  });

  it('whatever the chunks and the URLs already taken, it leaves what inserting all and cutting the level would', async () => {
    const paths = fc.uniqueArray(fc.integer({ min: 0, max: 40 }), { maxLength: 30 });
    await fc.assert(
      fc.asyncProperty(
        paths,
        fc.array(fc.integer({ min: 0, max: 40 }), { maxLength: 8 }),
        fc.integer({ min: 0, max: 30 }),
        fc.array(fc.integer({ min: 1, max: 12 }), { minLength: 1, maxLength: 6 }),
        async (links, taken, slots, sizes) => {
          const seeds = ['https://a.test/', ...new Set(taken.map((n) => `https://a.test/p${n}`))];
          const crawlId = await insertTestCrawl(tdb.db, { seeds, maxPages: seeds.length + 50 });
          const candidates = links.map((n) => page(`p${n}`));
          const chunks: Candidate[][] = [];
          for (let i = 0, k = 0; i < candidates.length; k += 1) chunks.push(candidates.slice(i, (i += sizes[k % sizes.length]!)));
          const r = await land(crawlId, chunks, slots);
          const lands = candidates.map((c) => c.url).filter((u) => !seeds.includes(u));
          expect(r.rows).toEqual(lands.map((u, i) => (i < slots ? pending(u) : cut(u))));
          expect(r.landed).toEqual({ kept: Math.min(slots, lands.length), cut: Math.max(0, lands.length - slots) });
          // rows are cut after landing only in a chunk whose slots depended on URLs already taken
          if (lands.length === candidates.length) expect(r.updates).toBe(0);
        },
      ),
      { numRuns: 40 },
    );
  });
});
