// Crawl rows in tests: a running crawl written by the store's own insertCrawl, for the tests of
// admission and of the stores below it (one seed on a.test, depth 1, ten pages, every other setting
// off or one; only one crawl may run at a time, crawls_single_active_idx, so whatever runs is
// finished first); crawls started through the API; and the reads the tests make of the crawls
// table and of a crawl's archives.
import { sql } from 'kysely';
import { expect } from 'vitest';
import type { Db } from '../../src/db/connect.ts';
import type { Crawl } from '../../src/db/types.ts';
import type { HostCapture } from '../../src/flow/level.ts';
import { insertCrawl, type NewCrawlInput } from '../../src/store/crawls.ts';

export type TestCrawl = Partial<Omit<NewCrawlInput, 'seedLevel'>> & {
  /** set dispatched_depth: the level the workflow has dispatched (default: none yet) */
  dispatchedDepth?: number;
};

/** Marks every running crawl succeeded: the slot a new running crawl needs. */
export async function finishRunningCrawls(db: Db): Promise<void> {
  await db.updateTable('crawls').set({ state: 'succeeded', stop_reason: 'completed', finished_at: new Date() }).where('state', '=', 'running').execute();
}

/** A running crawl (the defaults above unless given), its seed level the seeds within maxPages; its id. */
export async function insertTestCrawl(db: Db, over: TestCrawl = {}): Promise<string> {
  const { dispatchedDepth, ...given } = over;
  await finishRunningCrawls(db);
  const c = {
    orgId: 'acme',
    submittedBy: 'alice',
    seeds: ['https://a.test/'],
    rules: [{ follow: 'same-origin' }],
    maxDepth: 1,
    maxPages: 10,
    perHostDelayMs: 0,
    hostParallelism: 1,
    formats: ['wacz'],
    signing: false,
    ...given,
  };
  const { id } = await insertCrawl(db, { ...c, seedLevel: { take: c.seeds.slice(0, c.maxPages), cut: c.seeds.slice(c.maxPages) } });
  if (dispatchedDepth !== undefined) await db.updateTable('crawls').set({ dispatched_depth: dispatchedDepth }).where('id', '=', id).execute();
  return id;
}

/** Every crawl row in the database: a test compares it before and after, whatever ran earlier. */
export async function crawlCount(db: Db): Promise<number> {
  const { n } = await db
    .selectFrom('crawls')
    .select(sql<number>`count(*)`.as('n'))
    .executeTakeFirstOrThrow();
  return Number(n);
}

/** The crawl's row (throws when there is none). */
export const crawlRow = (db: Db, id: string): Promise<Crawl> => db.selectFrom('crawls').selectAll().where('id', '=', id).executeTakeFirstOrThrow();

/** POST /api/crawls with `body` as whoever `headers` name: answered 202, the new crawl's id. */
export async function postCrawl(apiUrl: string, headers: Record<string, string>, body: Record<string, unknown>): Promise<string> {
  const res = await fetch(`${apiUrl}/api/crawls`, { method: 'POST', headers, body: JSON.stringify(body) });
  expect(res.status).toBe(202);
  return ((await res.json()) as { crawlId: string }).crawlId;
}

/** The crawl's archives with the URL of the page each one archives, and its provenance. */
const crawlArchives = (db: Db, crawlId: string) =>
  db
    .selectFrom('archives')
    .innerJoin('crawl_pages', 'crawl_pages.task_id', 'archives.task_id')
    .select(['crawl_pages.url', 'archives.provenance'])
    .where('crawl_pages.crawl_id', '=', crawlId)
    .execute();

/** The URLs the crawl archived, sorted (one entry per archive: a page archived twice shows twice). */
export async function archivedUrls(db: Db, crawlId: string): Promise<string[]> {
  return (await crawlArchives(db, crawlId)).map((r) => r.url).sort();
}

/** The software each of the crawl's archives names in its provenance (the capture worker's name is in it). */
export async function archiveSoftwares(db: Db, crawlId: string): Promise<string[]> {
  return (await crawlArchives(db, crawlId)).map((r) => String((r.provenance as { software?: string }).software));
}

/** The pacing audit of a crawl (GET /api/crawls/:id/pacing, 200): its violations and overlaps together. */
export async function pacingFaults(apiUrl: string, headers: Record<string, string>, crawlId: string): Promise<number> {
  const res = await fetch(`${apiUrl}/api/crawls/${crawlId}/pacing`, { headers });
  expect(res.status).toBe(200);
  const body = (await res.json()) as { violations: number; hosts: { overlaps: number }[] };
  return body.violations + body.hosts.reduce((n, h) => n + h.overlaps, 0);
}

/** What the capture workers' host logs say they captured for the crawl. */
export const capturesOf = (crawlId: string, ...workers: { hostLog: { all(): Record<string, HostCapture[]> } }[]): HostCapture[] =>
  workers.flatMap((w) =>
    Object.values(w.hostLog.all())
      .flat()
      .filter((c) => c.crawlId === crawlId),
  );
