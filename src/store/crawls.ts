// Crawl rows and level reports. Postgres holds the single-running-crawl guarantee
// (crawls_single_active_idx); nothing here second-guesses it.
import { sql, type Transaction } from 'kysely';
import type { Db, Queryable } from '../db/connect.ts';
import type { Crawl, CrawlState, Database, StopReason } from '../db/types.ts';
import { enqueueTuples } from '../fga/outbox.ts';
import { jobTuples } from '../fga/tuples.ts';
import { hostOf } from '../domain/crawl.ts';
import type { CrawlCounts } from '../domain/crawl-counts.ts';
import type { PageCursor } from '../domain/cursor.ts';
import { skippedLinksCount } from './decisions.ts';

export const SINGLE_ACTIVE_INDEX = 'crawls_single_active_idx';

/** True only for the unique violation of crawls_single_active_idx: the one thing that means 409. */
export function isSingleActiveViolation(err: unknown): boolean {
  const e = err as { code?: unknown; constraint?: unknown };
  return e.code === '23505' && e.constraint === SINGLE_ACTIVE_INDEX;
}

export interface NewCrawlInput {
  orgId: string;
  submittedBy: string;
  seeds: string[];
  /** the rules as fixed (normalised), stored as read */
  rules: unknown[];
  maxDepth: number;
  maxPages: number;
  perHostDelayMs: number;
  hostParallelism: number;
  /** absent: the column's defaults (BEHAVIOR_DEFAULTS) */
  behaviorsSeconds?: number;
  siteBehaviors?: boolean;
  /** absent: off */
  qa?: boolean;
  formats: string[];
  signing: boolean;
  /** the seed level: distinct seeds within maxPages, and those the cap left out */
  seedLevel: { take: string[]; cut: string[] };
}

/** Seed rows per INSERT (fromTargets may bring 100,000). */
const SEED_INSERT_CHUNK = 2000;

/**
 * The crawl row, its seed pages and the capture_job tuples, in one transaction: either the crawl
 * exists with everything it needs, or nothing does. Throws the unique violation of
 * crawls_single_active_idx when a crawl is already running (isSingleActiveViolation).
 */
export async function insertCrawl(db: Db, c: NewCrawlInput): Promise<{ id: string; startedAt: Date }> {
  return db.transaction().execute(async (trx) => {
    const row = await trx
      .insertInto('crawls')
      .values({
        org_id: c.orgId,
        submitted_by: c.submittedBy,
        seeds: c.seeds,
        rules: JSON.stringify(c.rules),
        max_depth: c.maxDepth,
        max_pages: c.maxPages,
        per_host_delay_ms: c.perHostDelayMs,
        host_parallelism: c.hostParallelism,
        ...(c.behaviorsSeconds !== undefined ? { behaviors_seconds: c.behaviorsSeconds } : {}),
        ...(c.siteBehaviors !== undefined ? { site_behaviors: c.siteBehaviors } : {}),
        ...(c.qa !== undefined ? { qa: c.qa } : {}),
        formats: c.formats,
        signing: c.signing,
      })
      .returning(['id', 'started_at'])
      .executeTakeFirstOrThrow();
    const pages = [
      ...c.seedLevel.take.map((url) => ({ crawl_id: row.id, url, depth: 0, host: hostOf(url), action: 'follow' as const })),
      ...c.seedLevel.cut.map((url) => ({
        crawl_id: row.id,
        url,
        depth: 0,
        host: hostOf(url),
        action: 'follow' as const,
        state: 'skipped' as const,
        skip_reason: 'max_pages',
      })),
    ];
    // in chunks: 5 parameters a row, and Postgres takes at most 65535 in one statement
    for (let i = 0; i < pages.length; i += SEED_INSERT_CHUNK) {
      await trx
        .insertInto('crawl_pages')
        .values(pages.slice(i, i + SEED_INSERT_CHUNK))
        .onConflict((oc) => oc.columns(['crawl_id', 'url_hash']).doNothing())
        .execute();
    }
    await enqueueTuples(trx, jobTuples(row.id, c.submittedBy, c.orgId));
    return { id: row.id, startedAt: row.started_at };
  });
}

export async function getCrawl(db: Queryable, id: string): Promise<Crawl | undefined> {
  return db.selectFrom('crawls').selectAll().where('id', '=', id).executeTakeFirst();
}

/** What admitting a level needs of its crawl. */
export type AdmissionCrawl = Pick<Crawl, 'org_id' | 'submitted_by' | 'rules' | 'seeds' | 'max_depth' | 'max_pages' | 'per_host_delay_ms'>;

/**
 * The crawl as admission plans with it. Its seeds come as one jsonb value: node-postgres parses a
 * text[] of 10,000 URLs in some 20 ms, JSON.parse the same in a few, and admission reads this
 * before its first S3 read.
 */
export async function admissionCrawl(db: Queryable, id: string): Promise<AdmissionCrawl | undefined> {
  return db
    .selectFrom('crawls')
    .select(['org_id', 'submitted_by', 'rules', sql<string[]>`to_jsonb(seeds)`.as('seeds'), 'max_depth', 'max_pages', 'per_host_delay_ms'])
    .where('id', '=', id)
    .executeTakeFirst();
}

export async function findRunningCrawl(db: Queryable): Promise<Crawl | undefined> {
  return db.selectFrom('crawls').selectAll().where('state', '=', 'running').executeTakeFirst();
}

/**
 * Ends a running crawl. Only a running row changes, so finishing twice (a retried activity) is a
 * no-op, and a finished crawl is never reopened or relabelled. Returns whether this call ended it.
 */
export async function finishCrawlRow(
  db: Queryable,
  id: string,
  outcome: { state: Exclude<CrawlState, 'running'>; stopReason: StopReason; failure?: string | null },
): Promise<boolean> {
  const res = await db
    .updateTable('crawls')
    .set({ state: outcome.state, stop_reason: outcome.stopReason, failure: outcome.failure ?? null, finished_at: sql<Date>`now()` })
    .where('id', '=', id)
    .where('state', '=', 'running')
    .executeTakeFirst();
  return Number(res.numUpdatedRows) === 1;
}

/** Records that `depth` was handed to the flow (before the POST, so a fast report is never 409). */
export async function markDispatched(db: Queryable, id: string, depth: number): Promise<void> {
  await db
    .updateTable('crawls')
    .set({ dispatched_depth: sql<number>`greatest(coalesce(dispatched_depth, -1), ${depth})` })
    .where('id', '=', id)
    .execute();
}

export async function markDepthReached(db: Queryable, id: string, depth: number): Promise<void> {
  await db
    .updateTable('crawls')
    .set({ depth_reached: sql<number>`greatest(depth_reached, ${depth})` })
    .where('id', '=', id)
    .execute();
}

// --- level reports -------------------------------------------------------------------------

/** Stores (or replaces) the report of one level, with a fresh report id. */
export async function upsertLevelReport(db: Queryable, crawlId: string, depth: number, body: unknown, reportedBy: string): Promise<{ reportId: string }> {
  const row = await db
    .insertInto('crawl_level_reports')
    .values({ crawl_id: crawlId, depth, body: JSON.stringify(body), reported_by: reportedBy })
    .onConflict((oc) =>
      oc.columns(['crawl_id', 'depth']).doUpdateSet({
        report_id: sql<string>`gen_random_uuid()`,
        body: sql<string>`excluded.body`,
        reported_by: sql<string>`excluded.reported_by`,
        reported_at: sql<Date>`now()`,
        admitted_at: null,
      }),
    )
    .returning('report_id')
    .executeTakeFirstOrThrow();
  return { reportId: row.report_id };
}

export async function getLevelReport(db: Queryable, crawlId: string, depth: number) {
  return db.selectFrom('crawl_level_reports').selectAll().where('crawl_id', '=', crawlId).where('depth', '=', depth).executeTakeFirst();
}

/** The level's current report id, its row locked until the transaction ends (a new report waits). */
export async function lockLevelReport(trx: Transaction<Database>, crawlId: string, depth: number): Promise<string | undefined> {
  const r = await trx
    .selectFrom('crawl_level_reports')
    .select('report_id')
    .where('crawl_id', '=', crawlId)
    .where('depth', '=', depth)
    .forUpdate()
    .executeTakeFirst();
  return r?.report_id;
}

export async function markReportAdmitted(db: Queryable, crawlId: string, depth: number, reportId: string): Promise<void> {
  await db
    .updateTable('crawl_level_reports')
    .set({ admitted_at: sql<Date>`now()` })
    .where('crawl_id', '=', crawlId)
    .where('depth', '=', depth)
    .where('report_id', '=', reportId)
    .execute();
}

// --- reading for the API -------------------------------------------------------------------

export interface CrawlListRow {
  id: string;
  orgId: string;
  state: CrawlState;
  stopReason: StopReason | null;
  seeds: string[];
  startedAt: Date;
  finishedAt: Date | null;
  waczCount: number;
}

export const CRAWL_PAGE_SIZE = 50;

/**
 * Newest first, past the cursor (src/domain/cursor.ts): older than `before`, or as old with a
 * smaller id when the cursor has one. Timestamps are compared and ordered at the millisecond
 * precision callers see, so the SQL agrees with isPastCursor row for row.
 */
export async function listCrawls(db: Queryable, opts: { state?: CrawlState; cursor?: PageCursor; limit?: number }): Promise<CrawlListRow[]> {
  let q = db.selectFrom('crawls as c').select([
    'c.id',
    'c.org_id',
    'c.state',
    'c.stop_reason',
    'c.seeds',
    'c.started_at',
    'c.finished_at',
    // archives has no crawl_id: the count goes through crawl_pages.task_id
    sql<number>`(SELECT count(*)::int FROM crawl_pages p JOIN archives a ON a.task_id = p.task_id WHERE p.crawl_id = c.id)`.as('wacz_count'),
  ]);
  if (opts.state !== undefined) q = q.where('c.state', '=', opts.state);
  const startedMs = sql`date_trunc('milliseconds', c.started_at)`;
  const c = opts.cursor;
  if (c !== undefined) {
    q =
      c.id === undefined
        ? q.where(sql<boolean>`${startedMs} < ${c.before}`)
        : q.where(sql<boolean>`(${startedMs}, c.id) < (${c.before}::timestamptz, ${c.id}::uuid)`);
  }
  const rows = await q
    .orderBy(startedMs, 'desc')
    .orderBy('c.id', 'desc')
    .limit(opts.limit ?? CRAWL_PAGE_SIZE)
    .execute();
  return rows.map((r) => ({
    id: r.id,
    orgId: r.org_id,
    state: r.state,
    stopReason: r.stop_reason,
    seeds: r.seeds,
    startedAt: r.started_at,
    finishedAt: r.finished_at,
    waczCount: r.wacz_count,
  }));
}

/** pagesDiscovered is every distinct page the crawl recorded plus every distinct URL the rules
 * skipped (rule 0 included; once per crawl, however many levels skipped it): the difference to
 * pagesCaptured is what failures, rules, robots and the caps threw away. */
export async function crawlCounts(db: Queryable, crawlId: string): Promise<CrawlCounts> {
  const r = await db
    .selectFrom('crawl_pages as p')
    .leftJoin('archives as a', 'a.task_id', 'p.task_id')
    .where('p.crawl_id', '=', crawlId)
    .select([
      sql<number>`count(*)::int`.as('discovered'),
      sql<number>`count(*) FILTER (WHERE p.state = 'captured')::int`.as('captured'),
      sql<number>`count(*) FILTER (WHERE p.state = 'failed')::int`.as('failed'),
      sql<number>`count(*) FILTER (WHERE p.state = 'skipped')::int`.as('skipped'),
      sql<number>`count(*) FILTER (WHERE p.state = 'pending')::int`.as('pending'),
      sql<number>`count(a.id)::int`.as('wacz'),
    ])
    .executeTakeFirstOrThrow();
  const skipped = await skippedLinksCount(db, crawlId);
  return {
    pagesDiscovered: r.discovered + skipped,
    pagesCaptured: r.captured,
    pagesFailed: r.failed,
    pagesSkipped: r.skipped,
    pagesPending: r.pending,
    waczCount: r.wacz,
  };
}
