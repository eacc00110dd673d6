// Putting captures into the ledger. An archive row and its relationship tuples are written in
// the same transaction (the tuples as outbox rows), so either both land or neither does. Used by
// level admission and by reconcile, so both paths register exactly the same way.
import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import type { ArchiveRecord } from '../domain/admission.ts';
import type { SubmissionRecord } from '../domain/admission-plan.ts';
import { enqueueTuples } from '../fga/outbox.ts';
import { archiveTuples, type Tuple } from '../fga/tuples.ts';
import type { Queryable, Trx } from '../db/connect.ts';
import { copyOrElse, copyRows, type CopyTarget } from '../db/copy.ts';

export interface Registration {
  taskId: string;
  archiveId: string;
  /** false when the task was already in the ledger (a retried or repeated admission) */
  created: boolean;
}

/**
 * Registers captures as archives, each with `archive#parent capture_job:<crawlId>` queued in the
 * same transaction. Idempotent: a task already in the ledger is left as it is (ON CONFLICT DO
 * NOTHING) and gets no second set of tuples; a task whose archive its owner deleted is not registered
 * again (both come back with created false). The rows are copied in (COPY, about half Postgres's
 * CPU) unless the ledger holds one of them already. Call it inside a transaction.
 */
export async function registerCaptures(trx: Trx, items: { archive: ArchiveRecord; crawlId: string }[]): Promise<Registration[]> {
  if (items.length === 0) return [];
  // one row per task: a batch must not name the same task twice
  const byTask = new Map(items.map((i) => [i.archive.taskId, i]));
  const deleted = await deletedTasks(trx, [...byTask.keys()]);
  const unique = [...byTask.values()].filter((i) => !deleted.has(i.archive.taskId));
  if (unique.length === 0) return [...byTask.keys()].map((taskId) => ({ taskId, archiveId: '', created: false }));
  const inserted = await copyOrElse(
    trx,
    () => copyArchives(trx, unique),
    () => insertArchives(trx, unique),
  );
  const tuples: Tuple[] = [];
  const created = new Map<string, string>();
  for (const row of inserted) {
    created.set(row.task_id, row.id);
    tuples.push(...archiveTuples(row.id, byTask.get(row.task_id)!.crawlId));
  }
  await enqueueTuples(trx, tuples);
  await recordRequires(
    trx,
    inserted.map((row) => ({ archiveId: row.id, item: byTask.get(row.task_id)! })),
  );
  const missing = unique.filter((i) => !created.has(i.archive.taskId)).map((i) => i.archive.taskId);
  const existing = missing.length === 0 ? [] : await trx.selectFrom('archives').select(['id', 'task_id']).where('task_id', 'in', missing).execute();
  const existingIds = new Map(existing.map((r) => [r.task_id, r.id]));
  return [...byTask.values()].map((i) => {
    if (deleted.has(i.archive.taskId)) return { taskId: i.archive.taskId, archiveId: '', created: false };
    const id = created.get(i.archive.taskId);
    if (id !== undefined) return { taskId: i.archive.taskId, archiveId: id, created: true };
    // a (bucket, key) held by another task has no row for this task: report it as not created
    return { taskId: i.archive.taskId, archiveId: existingIds.get(i.archive.taskId) ?? '', created: false };
  });
}

/**
 * The tasks whose archive its owner deleted (archive_deletions, delete-archive.ts): never registered
 * again. Read after the caller wrote the tasks' submissions, whose rows a deletion locks first.
 */
async function deletedTasks(trx: Trx, taskIds: string[]): Promise<Set<string>> {
  const rows = await trx
    .selectFrom('archive_deletions')
    .select('task_id')
    .where('task_id', '=', sql<string>`any(${taskIds}::text[])`)
    .execute();
  return new Set(rows.map((r) => r.task_id));
}

/** Where archives are copied in (the bench's write floor copies the same). */
export const ARCHIVES_COPY: CopyTarget = {
  table: 'archives',
  columns: ['id', 'task_id', 'bucket', 'object_key', 'object_version', 'url', 'final_url', 'sha256', 'size', 'provenance', 'captured_at'],
};

/** The archives, none of which the ledger holds yet, copied in whole (copy.ts); their ids are made here. */
async function copyArchives(trx: Trx, items: { archive: ArchiveRecord }[]): Promise<{ id: string; task_id: string }[]> {
  const created = items.map(({ archive }) => ({ id: randomUUID(), task_id: archive.taskId }));
  await copyRows(
    trx,
    ARCHIVES_COPY,
    items.map(({ archive: a }, i) => [
      created[i]!.id,
      a.taskId,
      a.bucket,
      a.objectKey,
      a.objectVersion ?? null,
      a.url,
      a.finalUrl,
      a.sha256,
      a.size,
      JSON.stringify(a.provenance),
      a.capturedAt,
    ]),
  );
  return created;
}

/** The archives the ledger does not hold yet, when some of them it may: the rest are left as they are. */
async function insertArchives(trx: Trx, items: { archive: ArchiveRecord }[]): Promise<{ id: string; task_id: string }[]> {
  // the rows go as one jsonb parameter: a multi-row VALUES of 10 parameters a row cost more to
  // build and to parse than the rows cost to write (admission registers 1,000s per level)
  const rows = items.map(({ archive: a }, ord) => ({
    ord,
    task_id: a.taskId,
    bucket: a.bucket,
    object_key: a.objectKey,
    object_version: a.objectVersion ?? null,
    url: a.url,
    final_url: a.finalUrl,
    sha256: a.sha256,
    size: a.size,
    provenance: a.provenance,
    captured_at: a.capturedAt,
  }));
  const { rows: inserted } = await sql<{ id: string; task_id: string }>`
    INSERT INTO archives (task_id, bucket, object_key, object_version, url, final_url, sha256, size, provenance, captured_at)
    SELECT x.task_id, x.bucket, x.object_key, x.object_version, x.url, x.final_url, x.sha256, x.size, x.provenance, x.captured_at
    FROM jsonb_to_recordset(${JSON.stringify(rows)}::jsonb)
      AS x(ord int, task_id text, bucket text, object_key text, object_version text, url text, final_url text, sha256 text, size bigint, provenance jsonb, captured_at timestamptz)
    ORDER BY x.ord
    -- task_id or (bucket, object_key): either way the capture is already registered
    ON CONFLICT DO NOTHING
    RETURNING id, task_id
  `.execute(trx);
  return inserted;
}

/**
 * The archives new archives require (their manifests' `requires`), each resolved to the archive
 * with that bucket and key when it is in the ledger and of the same crawl (its task's submission):
 * never another crawl's, so never another organization's. Edges earlier archives left unresolved
 * are resolved when the archive they name arrives.
 */
async function recordRequires(trx: Queryable, created: { archiveId: string; item: { archive: ArchiveRecord; crawlId: string } }[]): Promise<void> {
  if (created.length === 0) return;
  const edges = created.flatMap(({ archiveId, item }) =>
    (item.archive.requires ?? [])
      .filter((key) => key !== item.archive.objectKey)
      .map((key) => ({ archive_id: archiveId, bucket: item.archive.bucket, object_key: key, crawl_id: item.crawlId })),
  );
  if (edges.length > 0) {
    await sql`
      INSERT INTO archive_requires (archive_id, bucket, object_key, required_id)
      SELECT x.archive_id, x.bucket, x.object_key,
        (SELECT r.id FROM archives r JOIN capture_submissions s ON s.task_id = r.task_id
          WHERE r.bucket = x.bucket AND r.object_key = x.object_key AND s.crawl_id = x.crawl_id AND r.id <> x.archive_id)
      FROM jsonb_to_recordset(${JSON.stringify(edges)}::jsonb) AS x(archive_id uuid, bucket text, object_key text, crawl_id uuid)
      ON CONFLICT DO NOTHING
    `.execute(trx);
  }
  // Nearly always no unresolved edge names a new archive. Asking that first probes one partial
  // index; the join below cost more to plan (1.3 ms, with 1,000 ids) than it then had to do.
  const named = created.map((c) => c.item.archive);
  const unresolved = await sql<{ any: boolean }>`
    SELECT EXISTS (
      SELECT 1 FROM archive_requires e
      WHERE e.required_id IS NULL
        AND (e.bucket, e.object_key) IN (SELECT * FROM unnest(${named.map((a) => a.bucket)}::text[], ${named.map((a) => a.objectKey)}::text[]))
    ) AS any`.execute(trx);
  if (unresolved.rows[0]?.any !== true) return;
  const ids = created.map((c) => c.archiveId);
  await sql`
    UPDATE archive_requires e SET required_id = a.id
    FROM archives a, capture_submissions sa, archives d, capture_submissions sd
    WHERE e.required_id IS NULL AND a.id = ANY(${ids}::uuid[]) AND e.bucket = a.bucket AND e.object_key = a.object_key
      AND sa.task_id = a.task_id AND d.id = e.archive_id AND sd.task_id = d.task_id AND sd.crawl_id = sa.crawl_id AND a.id <> d.id
  `.execute(trx);
}

/** One capture: the archive and its tuple in the caller's transaction. */
export async function registerCapture(trx: Trx, archive: ArchiveRecord, crawlId: string): Promise<Registration> {
  const [r] = await registerCaptures(trx, [{ archive, crawlId }]);
  return r!;
}

/**
 * capture_submissions: task id → organization, for every page that carries a task id, failures
 * included — the row reconcile reads back. Reporting again replaces the manifest key or error,
 * but a row never moves to another crawl: a task another crawl holds is left as it is. Returns the
 * task ids whose row is now this record's.
 */
export async function recordSubmissions(trx: Trx, subs: SubmissionRecord[]): Promise<Set<string>> {
  if (subs.length === 0) return new Set();
  const unique = [...new Map(subs.map((s) => [s.taskId, s])).values()];
  return copyOrElse(
    trx,
    () => copySubmissions(trx, unique),
    () => upsertSubmissions(trx, unique),
  );
}

/** Where submissions are copied in (the bench's write floor copies the same). */
export const SUBMISSIONS_COPY: CopyTarget = {
  table: 'capture_submissions',
  columns: ['task_id', 'org_id', 'submitted_by', 'crawl_id', 'url', 'manifest_key', 'manifest_version', 'manifest_error'],
};

/** Submissions of tasks the ledger has no row for yet (a level's first admission), copied in whole. */
async function copySubmissions(trx: Trx, subs: SubmissionRecord[]): Promise<Set<string>> {
  await copyRows(
    trx,
    SUBMISSIONS_COPY,
    subs.map((s) => [s.taskId, s.orgId, s.submittedBy, s.crawlId, s.url, s.manifestKey, s.manifestVersion, s.manifestError]),
  );
  return new Set(subs.map((s) => s.taskId));
}

/** Submissions some of whose tasks the ledger may hold: a task's row is replaced only within its own crawl. */
async function upsertSubmissions(trx: Trx, subs: SubmissionRecord[]): Promise<Set<string>> {
  const rows = subs.map((s, ord) => ({
    ord,
    task_id: s.taskId,
    org_id: s.orgId,
    submitted_by: s.submittedBy,
    crawl_id: s.crawlId,
    url: s.url,
    manifest_key: s.manifestKey,
    manifest_version: s.manifestVersion,
    manifest_error: s.manifestError,
  }));
  const { rows: written } = await sql<{ task_id: string }>`
    INSERT INTO capture_submissions (task_id, org_id, submitted_by, crawl_id, url, manifest_key, manifest_version, manifest_error)
    SELECT x.task_id, x.org_id, x.submitted_by, x.crawl_id, x.url, x.manifest_key, x.manifest_version, x.manifest_error
    FROM jsonb_to_recordset(${JSON.stringify(rows)}::jsonb)
      AS x(ord int, task_id text, org_id text, submitted_by text, crawl_id uuid, url text, manifest_key text, manifest_version text, manifest_error text)
    ORDER BY x.ord
    ON CONFLICT (task_id) DO UPDATE SET manifest_key = excluded.manifest_key, manifest_version = excluded.manifest_version,
      manifest_error = excluded.manifest_error, url = excluded.url
      WHERE capture_submissions.crawl_id IS NOT DISTINCT FROM excluded.crawl_id AND capture_submissions.org_id = excluded.org_id
    RETURNING task_id
  `.execute(trx);
  return new Set(written.map((r) => r.task_id));
}
