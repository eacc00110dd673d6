// Putting captures into the ledger. An archive row and its relationship tuples are written in
// the same transaction (the tuples as outbox rows), so either both land or neither does. Used by
// level admission and by reconcile, so both paths register exactly the same way.
import type { Kysely, Transaction } from 'kysely';
import type { Database } from '../db/types.ts';
import type { ArchiveRecord } from '../domain/admission.ts';
import { enqueueTuples } from '../fga/outbox.ts';
import { archiveTuples, type Tuple } from '../fga/tuples.ts';

type Q = Kysely<Database> | Transaction<Database>;

export interface Registration {
  taskId: string;
  archiveId: string;
  /** false when the task was already in the ledger (a retried or repeated admission) */
  created: boolean;
}

/**
 * Registers captures as archives, each with `archive#parent capture_job:<crawlId>` queued in the
 * same transaction. Idempotent: a task already in the ledger is left as it is (ON CONFLICT DO
 * NOTHING) and gets no second set of tuples. Call it inside a transaction.
 */
export async function registerCaptures(trx: Q, items: { archive: ArchiveRecord; crawlId: string }[]): Promise<Registration[]> {
  if (items.length === 0) return [];
  // one row per task: a batch must not name the same task twice
  const byTask = new Map(items.map((i) => [i.archive.taskId, i]));
  const unique = [...byTask.values()];
  const inserted = await trx
    .insertInto('archives')
    .values(
      unique.map(({ archive: a }) => ({
        task_id: a.taskId,
        bucket: a.bucket,
        object_key: a.objectKey,
        url: a.url,
        final_url: a.finalUrl,
        sha256: a.sha256,
        size: a.size,
        provenance: JSON.stringify(a.provenance),
        captured_at: a.capturedAt,
      })),
    )
    // task_id or (bucket, object_key): either way the capture is already registered
    .onConflict((oc) => oc.doNothing())
    .returning(['id', 'task_id'])
    .execute();
  const tuples: Tuple[] = [];
  const created = new Map<string, string>();
  for (const row of inserted) {
    created.set(row.task_id, row.id);
    tuples.push(...archiveTuples(row.id, byTask.get(row.task_id)!.crawlId));
  }
  await enqueueTuples(trx, tuples);
  const missing = unique.filter((i) => !created.has(i.archive.taskId)).map((i) => i.archive.taskId);
  const existing =
    missing.length === 0 ? [] : await trx.selectFrom('archives').select(['id', 'task_id']).where('task_id', 'in', missing).execute();
  const existingIds = new Map(existing.map((r) => [r.task_id, r.id]));
  return unique.map((i) => {
    const id = created.get(i.archive.taskId);
    if (id !== undefined) return { taskId: i.archive.taskId, archiveId: id, created: true };
    // a (bucket, key) held by another task has no row for this task: report it as not created
    return { taskId: i.archive.taskId, archiveId: existingIds.get(i.archive.taskId) ?? '', created: false };
  });
}

/** One capture: the archive and its tuple in the caller's transaction. */
export async function registerCapture(trx: Q, archive: ArchiveRecord, crawlId: string): Promise<Registration> {
  const [r] = await registerCaptures(trx, [{ archive, crawlId }]);
  return r!;
}

export interface SubmissionRecord {
  taskId: string;
  orgId: string;
  submittedBy: string;
  crawlId: string | null;
  url: string;
  manifestKey: string | null;
  manifestError: string | null;
}

/**
 * capture_submissions: task id → organization, for every page that carries a task id, failures
 * included — the row reconcile reads back. Reporting again replaces the manifest key or error.
 */
export async function recordSubmissions(trx: Q, subs: SubmissionRecord[]): Promise<void> {
  if (subs.length === 0) return;
  const unique = [...new Map(subs.map((s) => [s.taskId, s])).values()];
  await trx
    .insertInto('capture_submissions')
    .values(
      unique.map((s) => ({
        task_id: s.taskId,
        org_id: s.orgId,
        submitted_by: s.submittedBy,
        crawl_id: s.crawlId,
        url: s.url,
        manifest_key: s.manifestKey,
        manifest_error: s.manifestError,
      })),
    )
    .onConflict((oc) =>
      oc.column('task_id').doUpdateSet((eb) => ({
        manifest_key: eb.ref('excluded.manifest_key'),
        manifest_error: eb.ref('excluded.manifest_error'),
        url: eb.ref('excluded.url'),
      })),
    )
    .execute();
}
