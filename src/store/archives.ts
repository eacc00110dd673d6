// Archive queries for the API. The ledger has no owner column: who may see a row is OpenFGA's
// answer, so these return candidates and the caller filters them.
import { sql } from 'kysely';
import type { Db } from '../db/connect.ts';
import type { Archive } from '../db/types.ts';
import type { PageCursor } from '../domain/cursor.ts';
import { qaFromProvenance, thumbnailFromProvenance, type QaNote, type ThumbnailRef } from '../domain/admission.ts';
import { archiveRef } from '../fga/tuples.ts';

export async function findArchive(db: Db, id: string): Promise<Archive | undefined> {
  return db.selectFrom('archives').selectAll().where('id', '=', id).executeTakeFirst();
}

/** Where an archive's object is, and whether its WACZ requires others (archive_requires). */
export type ArchiveLocation = Pick<Archive, 'bucket' | 'object_key' | 'object_version'> & { requires: boolean };

/**
 * Where archives' objects are: all that signing needs (no provenance to parse on the hot path), for
 * several ids in one query; ids not in the ledger are absent from the map. `requires` says whether
 * any edge leaves the archive, resolved or not: only then has signing more to read.
 */
export async function archiveLocations(db: Db, ids: readonly string[]): Promise<Map<string, ArchiveLocation>> {
  const rows = await db
    .selectFrom('archives as a')
    .select(['a.id', 'a.bucket', 'a.object_key', 'a.object_version'])
    .select(sql<boolean>`EXISTS (SELECT 1 FROM archive_requires e WHERE e.archive_id = a.id)`.as('requires'))
    .where('a.id', '=', sql<string>`any(${[...ids]}::uuid[])`)
    .execute();
  return new Map(rows.map((r) => [r.id, { bucket: r.bucket, object_key: r.object_key, object_version: r.object_version, requires: r.requires }]));
}

/**
 * Which archives a candidate query reads: all of them (each filtered by a check afterwards), or
 * only those reachable from the authorization side — archives shared directly, and archives
 * reported for one of these crawls (capture_submissions.crawl_id, the crawl behind each archive's
 * capture_job parent) whose parent tuple OpenFGA has accepted: none of it is still in the outbox.
 * Such an archive is one OpenFGA lets the caller view through its job, as surely as a check of it
 * would say; one whose tuple is yet to be delivered is one a check would refuse.
 */
export type CandidateScope = { kind: 'all' } | { kind: 'reachable'; jobs: readonly string[]; shared: readonly string[] };

/**
 * Newest first (captured_at desc, id desc), past the cursor: older than `before`, or as old with a
 * smaller id when the cursor carries one. captured_at is stored at millisecond precision
 * (migration 0008), so a cursor built from a row's ISO timestamp compares equal to the row.
 */
export async function archiveCandidates(db: Db, opts: { cursor?: PageCursor; limit: number; scope?: CandidateScope }): Promise<Archive[]> {
  const scope = opts.scope ?? { kind: 'all' };
  if (scope.kind === 'reachable' && scope.jobs.length === 0 && scope.shared.length === 0) return [];
  let q = db.selectFrom('archives').selectAll();
  const c = opts.cursor;
  if (c !== undefined) {
    q = c.id === undefined ? q.where('captured_at', '<', c.before) : q.where(sql<boolean>`(captured_at, id) < (${c.before}::timestamptz, ${c.id}::uuid)`);
  }
  if (scope.kind === 'reachable') q = q.where(reachableClause(scope));
  return q.orderBy('captured_at', 'desc').orderBy('id', 'desc').limit(opts.limit).execute();
}

/**
 * From this many reachable crawls on, a candidate's crawl is looked up row by row (one primary-key
 * probe per archive read newest first, stopping at the page) instead of collecting every archive
 * of every reachable crawl into a hash first: that hash grows with the archives reached (10,000
 * task ids for 333 crawls of 30), the probes with the rows read before the page is full
 * (about limit ÷ the share of archives reached, ~500 at 10%). Below it the hash is the cheaper.
 */
export const PROBE_FROM_JOBS = 100;

function reachableClause(scope: Extract<CandidateScope, { kind: 'reachable' }>) {
  const jobs = [...scope.jobs];
  const shared = [...scope.shared];
  const ofCrawl =
    jobs.length >= PROBE_FROM_JOBS
      ? sql<boolean>`(SELECT s.crawl_id FROM capture_submissions s WHERE s.task_id = archives.task_id) = ANY(${jobs}::uuid[])`
      : sql<boolean>`task_id IN (SELECT s.task_id FROM capture_submissions s WHERE s.crawl_id = ANY(${jobs}::uuid[]))`;
  // fga_outbox_tuple_idx (object, relation, …): one index probe per candidate, on the archive's ref
  const delivered = sql<boolean>`NOT EXISTS (SELECT 1 FROM fga_outbox o WHERE o.object = ${archiveRef('')} || archives.id::text AND o.relation = 'parent')`;
  const ofReachedCrawl = sql<boolean>`(${ofCrawl} AND ${delivered})`;
  const isShared = sql<boolean>`id = ANY(${shared}::uuid[])`;
  // an empty side is left out rather than OR-ed in empty: the query and its plan are then those of the other side alone
  if (shared.length === 0) return ofReachedCrawl;
  if (jobs.length === 0) return isShared;
  return sql<boolean>`(${ofReachedCrawl} OR ${isShared})`;
}

/** Which of these archives are in the ledger and within the scope: their id, object key and capturedAt. */
export async function archivesWithin(db: Db, ids: readonly string[], scope: CandidateScope): Promise<Pick<Archive, 'id' | 'object_key' | 'captured_at'>[]> {
  if (ids.length === 0 || (scope.kind === 'reachable' && scope.jobs.length === 0 && scope.shared.length === 0)) return [];
  let q = db
    .selectFrom('archives')
    .select(['id', 'object_key', 'captured_at'])
    .where('id', '=', sql<string>`any(${[...ids]}::uuid[])`);
  if (scope.kind === 'reachable') q = q.where(reachableClause(scope));
  return q.execute();
}

export interface ArchiveView {
  id: string;
  taskId: string;
  url: string;
  finalUrl: string | null;
  bucket: string;
  objectKey: string;
  sha256: string | null;
  size: number | null;
  capturedAt: string;
  indexedAt: string | null;
  /** the page's title as captured; null when the capture recorded none */
  title: string | null;
  /** the screenshot's format when the capture made one (POST /api/archives/:id/thumbnail-url signs it) */
  thumbnail: ThumbnailRef['format'] | null;
  /** the capture's quality check, when its crawl asked for one (qa) */
  qa: QaNote | null;
}

export function archiveView(a: Archive): ArchiveView {
  return {
    id: a.id,
    taskId: a.task_id,
    url: a.url,
    finalUrl: a.final_url,
    bucket: a.bucket,
    objectKey: a.object_key,
    sha256: a.sha256,
    size: a.size,
    capturedAt: a.captured_at.toISOString(),
    // an archive marked unindexable (index_error) has indexed_at too, and is not searchable
    indexedAt: a.indexed_at === null || a.index_error !== null ? null : a.indexed_at.toISOString(),
    title: typeof a.provenance?.title === 'string' ? a.provenance.title : null,
    thumbnail: thumbnailFromProvenance(a.provenance)?.format ?? null,
    qa: qaFromProvenance(a.provenance) ?? null,
  };
}

/** Where this archive's screenshot is, read fresh (as for signing); undefined when it has none or is not in the ledger. */
export async function archiveThumbnail(db: Db, id: string): Promise<ThumbnailRef | undefined> {
  const row = await db
    .selectFrom('archives')
    .select(sql<Record<string, unknown>>`provenance -> 'thumbnail'`.as('t'))
    .where('id', '=', id)
    .executeTakeFirst();
  return row === undefined ? undefined : thumbnailFromProvenance({ thumbnail: row.t });
}
