// The task ids a level may not take (src/store/task-owners.ts), read from the stored report in the
// same statement as admission now reads them, against the real Postgres: the same set as asking
// with the report's ids, a report replaced between the two reads asked for again, and the count of
// pages taken read only when a level follows.
import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import type { Db } from '../../src/db/connect.ts';
import { foreignOfReport } from '../../src/ledger/admission-read.ts';
import { upsertLevelReport } from '../../src/store/crawls.ts';
import { insertCandidates, pagesTaken } from '../../src/store/pages.ts';
import { foreignTaskIds, foreignTaskIdsOfReport } from '../../src/store/task-owners.ts';
import { insertTestCrawl } from '../support/crawl-rows.ts';
import { reportedFor } from '../support/ledger.ts';
import { useHarness } from '../support/harness.ts';

const h = useHarness({ api: false });
let db: Db;
beforeAll(() => {
  db = h.tdb.db;
});

const tag = (name: string): string => `${name}-${randomUUID()}`;

/** Gives the crawl's page at `url` (inserted at `depth` when it is not the seed) the task id. */
async function pageWithTask(crawlId: string, url: string, depth: number, taskId: string): Promise<void> {
  if (depth > 0) await insertCandidates(db, crawlId, depth, [{ url, host: new URL(url).host, action: 'follow' }]);
  await db.updateTable('crawl_pages').set({ task_id: taskId }).where('crawl_id', '=', crawlId).where('url', '=', url).execute();
}

/** An archive row with no submission of any crawl. */
async function lonelyArchive(taskId: string): Promise<void> {
  await db
    .insertInto('archives')
    .values({ task_id: taskId, bucket: 'b', object_key: `k/${taskId}.wacz`, url: 'https://x.test/', provenance: '{}', captured_at: new Date() })
    .execute();
}

/**
 * Crawl A holds a submission, a page's task and there is an archive nobody submitted; crawl B has
 * its own seed's task and a task on its level 1. Ids by role.
 */
async function ledger() {
  const ids = { submittedByA: tag('sub-a'), pageOfA: tag('page-a'), lonely: tag('lonely'), ownB: tag('own-b'), deeperB: tag('deeper-b'), fresh: tag('fresh') };
  const crawlA = await insertTestCrawl(db, { seeds: ['https://a.test/'] });
  await reportedFor(db, crawlA, [{ taskId: ids.submittedByA, url: 'https://a.test/s' }]);
  await pageWithTask(crawlA, 'https://a.test/', 0, ids.pageOfA);
  await lonelyArchive(ids.lonely);
  const crawlB = await insertTestCrawl(db, { seeds: ['https://b.test/'] });
  await pageWithTask(crawlB, 'https://b.test/', 0, ids.ownB);
  await pageWithTask(crawlB, 'https://b.test/deeper', 1, ids.deeperB);
  return { crawlB, ids };
}

const page = (url: string, taskId?: unknown) => ({ url, status: 'captured', ...(taskId !== undefined ? { taskId } : {}) });

describe('foreignTaskIdsOfReport', () => {
  it('finds in the stored report exactly the ids others hold, as asking with the report’s ids does', async () => {
    const { crawlB, ids } = await ledger();
    const named = [ids.submittedByA, ids.pageOfA, ids.lonely, ids.ownB, ids.deeperB, ids.fresh];
    const pages = [...named.map((t, i) => page(`https://b.test/${i}`, t)), page('https://b.test/none'), page('https://b.test/number', 7)];
    const { reportId } = await upsertLevelReport(db, crawlB, 0, { depth: 0, pages }, 'test');

    const r = await foreignTaskIdsOfReport(db, crawlB, 0);
    expect(r.reportId).toBe(reportId);
    expect([...r.foreign].sort()).toEqual([ids.submittedByA, ids.pageOfA, ids.lonely, ids.deeperB].sort());
    expect(r.foreign).toEqual(await foreignTaskIds(db, crawlB, 0, named));
  });

  it('a level with no report: no report id, nothing foreign', async () => {
    const { crawlB } = await ledger();
    expect(await foreignTaskIdsOfReport(db, crawlB, 0)).toEqual({ reportId: undefined, foreign: new Set() });
  });

  it('a report replaced between the two reads is asked for again, with the pages read', async () => {
    const { crawlB, ids } = await ledger();
    await upsertLevelReport(db, crawlB, 0, { depth: 0, pages: [page('https://b.test/1', ids.fresh)] }, 'test');
    const named = await foreignTaskIdsOfReport(db, crawlB, 0);
    expect(named.foreign).toEqual(new Set());
    const pages = [page('https://b.test/1', ids.submittedByA), page('https://b.test/2', ids.ownB)] as { url: string; taskId: string; status: 'captured' }[];
    const { reportId } = await upsertLevelReport(db, crawlB, 0, { depth: 0, pages }, 'test');

    expect(await foreignOfReport(db, { crawlId: crawlB, depth: 0, reportId, pages }, named)).toEqual(new Set([ids.submittedByA]));
    // read from the same report, the set read with it is the answer
    const same = await foreignTaskIdsOfReport(db, crawlB, 0);
    expect(await foreignOfReport(db, { crawlId: crawlB, depth: 0, reportId, pages }, same)).toBe(same.foreign);
  });
});

describe('pagesTaken', () => {
  it('counts the pages the cap did not cut while a level follows, and nothing at the last depth', async () => {
    const crawlId = await insertTestCrawl(db, { seeds: ['https://c.test/'], maxDepth: 1, maxPages: 2 });
    await insertCandidates(
      db,
      crawlId,
      1,
      ['p1', 'p2', 'p3'].map((p) => ({ url: `https://c.test/${p}`, host: 'c.test', action: 'follow' as const })),
      {
        placed: 0,
        slots: 1,
      },
    );
    expect(await pagesTaken(db, crawlId, 0)).toBe(1);
    expect(await pagesTaken(db, crawlId, 1)).toBe(0);
    await db.updateTable('crawls').set({ max_depth: 2 }).where('id', '=', crawlId).execute();
    expect(await pagesTaken(db, crawlId, 1)).toBe(2);
  });
});
