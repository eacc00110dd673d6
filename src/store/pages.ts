// crawl_pages: the frontier and the record of every page a crawl took. Deduplication is the
// unique (crawl_id, url_hash) index; what lands there is what the crawl decided.
import { sql, type RawBuilder } from 'kysely';
import type { PageAdmission } from '../domain/admission.ts';
import type { Queryable } from '../db/connect.ts';

export const MAX_PAGES_SKIP = 'max_pages';

export interface LevelPage {
  id: number;
  url: string;
  host: string;
  action: 'follow' | 'capture';
  state: 'pending' | 'captured' | 'failed' | 'skipped';
}

/** The pages of one level the flow is asked to capture: everything the page cap did not cut. */
export async function levelPages(db: Queryable, crawlId: string, depth: number): Promise<LevelPage[]> {
  return db
    .selectFrom('crawl_pages')
    .select(['id', 'url', 'host', 'action', 'state'])
    .where('crawl_id', '=', crawlId)
    .where('depth', '=', depth)
    .where((eb) => eb.or([eb('skip_reason', 'is', null), eb('skip_reason', '!=', MAX_PAGES_SKIP)]))
    .orderBy('id')
    .execute();
}

/**
 * Pages taken so far (every page the cap did not cut) at depths up to `depth`, when the crawl goes
 * deeper than `depth`; 0, counting nothing, when it does not (no level follows to plan).
 */
export async function pagesTaken(db: Queryable, crawlId: string, maxDepthIncl: number): Promise<number> {
  const r = await db
    .selectFrom('crawl_pages')
    .select(sql<number>`count(*)::int`.as('n'))
    .where('crawl_id', '=', crawlId)
    .where('depth', '<=', maxDepthIncl)
    .where(sql<boolean>`EXISTS (SELECT 1 FROM crawls c WHERE c.id = ${crawlId}::uuid AND c.max_depth > ${maxDepthIncl})`)
    .where((eb) => eb.or([eb('skip_reason', 'is', null), eb('skip_reason', '!=', MAX_PAGES_SKIP)]))
    .executeTakeFirstOrThrow();
  return r.n;
}

/** The latest finish per host, over this crawl's pages on `hosts`. */
export async function lastFinishByHost(db: Queryable, crawlId: string, hosts: string[]): Promise<Map<string, Date>> {
  if (hosts.length === 0) return new Map();
  const rows = await db
    .selectFrom('crawl_pages')
    .select(['host', sql<Date>`max(finished_at)`.as('last')])
    .where('crawl_id', '=', crawlId)
    .where('host', 'in', hosts)
    .where('finished_at', 'is not', null)
    .groupBy('host')
    .execute();
  return new Map(rows.filter((r) => r.last !== null).map((r) => [r.host, new Date(r.last)]));
}

/**
 * Writes what the level's report (corrected by the manifests) says about each page, in one
 * statement. `idOf` names the level's rows by URL (levelPages: the pages it dispatched, not the
 * ones the cap cut); a URL it does not name changes nothing. Returns how many rows changed.
 */
export async function applyPageAdmissions(db: Queryable, pages: PageAdmission[], idOf: ReadonlyMap<string, number>): Promise<number> {
  const rows = pages.flatMap((p) => {
    const id = idOf.get(p.url);
    if (id === undefined) return [];
    return [
      { id, state: p.state, skip_reason: p.skipReason, task_id: p.taskId, final_url: p.finalUrl, submitted_at: p.submittedAt, finished_at: p.finishedAt },
    ];
  });
  if (rows.length === 0) return 0;
  // By primary key each chunk reads only its own rows. Matched by URL within the level, every
  // chunk hashed all of the level's rows (EXPLAIN: 10,000 rows hashed for a chunk of 250).
  const res = await sql`
    UPDATE crawl_pages p SET
      state = x.state, skip_reason = x.skip_reason, task_id = x.task_id, final_url = x.final_url,
      submitted_at = x.submitted_at, finished_at = x.finished_at
    FROM jsonb_to_recordset(${JSON.stringify(rows)}::jsonb)
      AS x(id bigint, state text, skip_reason text, task_id text, final_url text, submitted_at timestamptz, finished_at timestamptz)
    WHERE p.id = ANY(${rows.map((r) => r.id)}::bigint[]) AND p.id = x.id
      AND (p.skip_reason IS NULL OR p.skip_reason <> ${MAX_PAGES_SKIP})
      -- a repeated admission leaves a row it would write unchanged alone: no new row version
      AND (p.state, p.skip_reason, p.task_id, p.final_url, p.submitted_at, p.finished_at)
        IS DISTINCT FROM (x.state, x.skip_reason, x.task_id, x.final_url, x.submitted_at, x.finished_at)
  `.execute(db);
  return Number(res.numAffectedRows ?? 0);
}

/**
 * Dispatched pages of a level the report did not mention end failed rather than pending forever.
 * Run once every reported page's row has been written (applyPageAdmissions leaves none of them
 * pending): what is still pending then is exactly what the report left out, found without
 * comparing every row with every reported URL.
 */
export async function failUnreported(db: Queryable, crawlId: string, depth: number): Promise<number> {
  const res = await sql`
    UPDATE crawl_pages SET state = 'failed'
    WHERE crawl_id = ${crawlId} AND depth = ${depth} AND state = 'pending'
  `.execute(db);
  return Number(res.numAffectedRows ?? 0);
}

/** Whether a level has any rows yet (a level reported again before its next level went out has). */
export async function levelHasPages(db: Queryable, crawlId: string, depth: number): Promise<boolean> {
  const r = await sql<{ has: boolean }>`SELECT EXISTS (SELECT 1 FROM crawl_pages WHERE crawl_id = ${crawlId} AND depth = ${depth}) AS has`.execute(db);
  return r.rows[0]?.has === true;
}

export interface Candidate {
  url: string;
  host: string;
  action: 'follow' | 'capture';
}

/** Where a chunk of candidates falls in a level that had no rows before: `placed` rows landed ahead of it, `slots` stay pending. */
export interface LevelBudget {
  placed: number;
  slots: number;
}

/**
 * Inserts the links the rules took as pages of `depth`, in the order given, ON CONFLICT DO
 * NOTHING: the rows that land are the ones recording and deciding agree on. Returns how many
 * landed pending (kept) and cut.
 *
 * Without a budget every row lands pending and the level is cut afterwards (cutLevel). With one
 * (the level had no rows before this admission, so the rows that land are the whole level, in
 * order) the rows past `slots` are cut at once, as cutLevel would leave them: a URL already a
 * page of the crawl takes no place, the same test the unique index makes.
 */
export async function insertCandidates(
  db: Queryable,
  crawlId: string,
  depth: number,
  candidates: Candidate[],
  budget?: LevelBudget,
): Promise<{ kept: number; cut: number }> {
  if (candidates.length === 0) return { kept: 0, cut: 0 };
  const level = { crawlId, depth };
  if (budget === undefined) return { kept: await insertRows(db, level, candidates, 'pending'), cut: 0 };
  // Rows past the slots land already cut: cutting them afterwards wrote each one twice (a new row
  // version and an entry in every index per cut row). While the slots left may still take every
  // row, rows land pending; the rest's fate waits on how many of those were pages already.
  let room = Math.max(0, budget.slots - budget.placed);
  let rest = candidates;
  const landed = { kept: 0, cut: 0 };
  for (let split = 0; rest.length > 0; split += 1) {
    if (room === 0) {
      landed.cut += await insertRows(db, level, rest, 'cut');
      break;
    }
    if (rest.length <= room) {
      landed.kept += await insertRows(db, level, rest, 'pending');
      break;
    }
    if (split === CANDIDATE_SPLITS) {
      const r = await insertThenCut(db, level, rest, room);
      landed.kept += r.kept;
      landed.cut += r.cut;
      break;
    }
    const kept = await insertRows(db, level, rest.slice(0, room), 'pending');
    rest = rest.slice(room);
    room -= kept;
    landed.kept += kept;
  }
  return landed;
}

/**
 * Statements a chunk straddling the slots is split into before the rest lands pending and is cut
 * after it (each split is one more statement; each leaves only the slots its URLs already taken
 * left, so a handful is nearly always enough).
 */
export const CANDIDATE_SPLITS = 4;

type LevelRef = { crawlId: string; depth: number };

/** Inserts the candidates in order, pending or cut at the cap; returns how many landed. */
async function insertRows(db: Queryable, level: LevelRef, candidates: Candidate[], as: 'pending' | 'cut'): Promise<number> {
  const res = await insertStatement(level, candidates, as, sql``).execute(db);
  return Number(res.numAffectedRows ?? 0);
}

/** insertRows, returning the ids of the rows that landed. */
async function insertReturningIds(db: Queryable, level: LevelRef, candidates: Candidate[], as: 'pending' | 'cut'): Promise<number[]> {
  const res = await insertStatement<{ id: number }>(level, candidates, as, sql`RETURNING id`).execute(db);
  return res.rows.map((r) => Number(r.id));
}

function insertStatement<R = never>(
  { crawlId, depth }: LevelRef,
  candidates: Candidate[],
  as: 'pending' | 'cut',
  returning: RawBuilder<unknown>,
): RawBuilder<R> {
  const rows = JSON.stringify(candidates.map((c, i) => ({ ...c, ord: i })));
  const [state, skipReason] = as === 'cut' ? ['skipped', MAX_PAGES_SKIP] : ['pending', null];
  // A URL already a page of the crawl is found once, by the insert's own probe of the unique
  // index (ON CONFLICT), not a second time by an anti-join before it.
  return sql<R>`
    INSERT INTO crawl_pages (crawl_id, url, depth, host, action, state, skip_reason)
    SELECT ${crawlId}::uuid, x.url, ${depth}, x.host, x.action, ${state}, ${skipReason}::text
    FROM jsonb_to_recordset(${rows}::jsonb) AS x(url text, host text, action text, ord int)
    ORDER BY x.ord
    ON CONFLICT (crawl_id, url_hash) DO NOTHING
    ${returning}
  `;
}

/** Inserts the candidates pending; those that landed past the first `room` are then cut. */
async function insertThenCut(db: Queryable, level: LevelRef, candidates: Candidate[], room: number): Promise<{ kept: number; cut: number }> {
  // ids follow the order given; the first that fit in the room stay pending
  const ids = (await insertReturningIds(db, level, candidates, 'pending')).sort((a, b) => a - b);
  const kept = Math.min(ids.length, room);
  const cut = ids.slice(kept);
  if (cut.length > 0) await sql`UPDATE crawl_pages SET state = 'skipped', skip_reason = ${MAX_PAGES_SKIP} WHERE id = ANY(${cut}::bigint[])`.execute(db);
  return { kept, cut: cut.length };
}

/**
 * Keeps the first `slots` pending pages of a level (in the order they landed) and marks the rest
 * skipped with reason max_pages, so the crawl never takes more than maxPages. Returns the counts.
 */
export async function cutLevel(db: Queryable, crawlId: string, depth: number, slots: number): Promise<{ kept: number; cut: number }> {
  await sql`
    UPDATE crawl_pages SET state = 'skipped', skip_reason = ${MAX_PAGES_SKIP}
    WHERE id IN (
      SELECT id FROM crawl_pages
      WHERE crawl_id = ${crawlId} AND depth = ${depth} AND state = 'pending'
      ORDER BY id OFFSET ${Math.max(0, slots)}
    )
  `.execute(db);
  const r = await db
    .selectFrom('crawl_pages')
    .select([
      sql<number>`count(*) FILTER (WHERE skip_reason IS DISTINCT FROM ${MAX_PAGES_SKIP})::int`.as('kept'),
      sql<number>`count(*) FILTER (WHERE skip_reason = ${MAX_PAGES_SKIP})::int`.as('cut'),
    ])
    .where('crawl_id', '=', crawlId)
    .where('depth', '=', depth)
    .executeTakeFirstOrThrow();
  return { kept: r.kept, cut: r.cut };
}

/**
 * A level reported again before its next level went out replaces that frontier: pages of
 * `depth` (the next level) that the new report's candidates no longer name are removed, and
 * pages the cap had cut become pending again so the cap is applied afresh. Only pending and
 * cap-cut rows are touched, and only while `depth` has not been dispatched.
 */
export async function resetFrontier(db: Queryable, crawlId: string, depth: number, keepUrls: string[]): Promise<number> {
  const guard = sql`NOT EXISTS (SELECT 1 FROM crawls c WHERE c.id = ${crawlId} AND coalesce(c.dispatched_depth, -1) >= ${depth})`;
  const res = await sql`
    DELETE FROM crawl_pages
    WHERE crawl_id = ${crawlId} AND depth = ${depth}
      AND (state = 'pending' OR skip_reason = ${MAX_PAGES_SKIP})
      AND NOT (url = ANY(${keepUrls}::text[])) AND ${guard}
  `.execute(db);
  await sql`
    UPDATE crawl_pages SET state = 'pending', skip_reason = NULL
    WHERE crawl_id = ${crawlId} AND depth = ${depth} AND skip_reason = ${MAX_PAGES_SKIP} AND ${guard}
  `.execute(db);
  return Number(res.numAffectedRows ?? 0);
}

/** Pages the cap cut anywhere in the crawl, seeds included. */
export async function pagesCut(db: Queryable, crawlId: string): Promise<number> {
  const r = await db
    .selectFrom('crawl_pages')
    .select(sql<number>`count(*)::int`.as('n'))
    .where('crawl_id', '=', crawlId)
    .where('skip_reason', '=', MAX_PAGES_SKIP)
    .executeTakeFirstOrThrow();
  return r.n;
}

export interface PacingGap {
  host: string;
  prevFinishedAt: Date | null;
  submittedAt: Date | null;
  gapMs: number | null;
}

/** The spec's pacing query ("The pacing is measured, not assumed"), with the gap computed. */
export async function pacingGaps(db: Queryable, crawlId: string): Promise<PacingGap[]> {
  const res = await sql<{ host: string; prev: Date | null; submitted_at: Date | null; gap_ms: number | null }>`
    SELECT host, lag(finished_at) OVER w AS prev, submitted_at,
           (extract(epoch FROM submitted_at - lag(finished_at) OVER w) * 1000)::float8 AS gap_ms
    FROM crawl_pages WHERE crawl_id = ${crawlId}
    WINDOW w AS (PARTITION BY host ORDER BY submitted_at)
  `.execute(db);
  return res.rows.map((r) => ({ host: r.host, prevFinishedAt: r.prev, submittedAt: r.submitted_at, gapMs: r.gap_ms }));
}
