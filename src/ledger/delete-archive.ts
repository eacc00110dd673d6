// Deleting an archive deletes what the capture made of the page, and it stays deleted.
//
// In one transaction: the row, its edges and its tuples, its parent and its shares (their deletes
// as outbox rows), and a row in archive_deletions, which keeps reconcile and a level reported again
// from registering the task anew (its capture_submissions row outlives the archive, manifest key
// and all). An archive another archive requires (its revisit records refer to payloads stored in
// this one) is refused, naming those archives: deleting it would break their replay. The task's
// submission row is locked first: an admission of its level writes that row before it registers
// the task, so it either registers before the delete (and the delete removes it) or sees the
// deletion's row.
//
// Then, outside the transaction: every version of the WACZ and of each object the capture wrote
// beside its manifest (capture-objects.ts: the screenshot, the rendered html and mhtml, the links,
// the manifest), and the archive's pages in the search index. What could not be removed is logged
// and kept in archive_deletions.cleanup_error.
import { ConsistencyPreference, type OpenFgaClient } from '@openfga/sdk';
import type { S3Client } from '@aws-sdk/client-s3';
import type { Db, Trx } from '../db/connect.ts';
import { captureListPrefix, isCaptureObject } from '../domain/capture-objects.ts';
import { enqueueTuples } from '../fga/outbox.ts';
import { archiveRef, archiveTuples, type Tuple } from '../fga/tuples.ts';
import { deleteVersionsUnder } from '../s3/delete-versions.ts';
import type { SearchIndex } from '../search/client.ts';
import { forgetArchive } from '../search/forget.ts';
import { archivesRequiring, type RequiringArchive } from '../store/archive-requires.ts';

export type DeleteOutcome = { kind: 'deleted'; objectDeleted: boolean } | { kind: 'missing' } | { kind: 'required'; by: RequiringArchive[] };

export interface DeleteArchiveDeps {
  db: Db;
  s3: S3Client;
  /** where the archive's tuples are read (its shares); without it, only the parent its crawl names goes */
  fga?: OpenFgaClient;
  /** present when search is configured: the archive's pages leave the index */
  search?: SearchIndex;
  log?: (msg: string) => void;
}

/** What the transaction removed, for the cleanup after it. */
interface Removed {
  kind: 'gone';
  taskId: string;
  bucket: string;
  key: string;
  manifestKey: string | null;
}

/** Deletes archive `id` as `deletedBy` (the subject who asked). */
export async function deleteArchive(deps: DeleteArchiveDeps, id: string, deletedBy: string): Promise<DeleteOutcome> {
  const held = deps.fga === undefined ? [] : await tuplesOn(deps.fga, id);
  const result = await deps.db.transaction().execute((trx) => removeFromLedger(trx, id, deletedBy, held));
  if (result.kind !== 'gone') return result;
  const problems = await cleanUp(deps, id, result);
  if (problems.length === 0) return { kind: 'deleted', objectDeleted: true };
  const message = problems.map((p) => p.message).join('; ');
  // the ledger no longer hands out URLs for it; what is left is named where an operator looks
  deps.log?.(`archive ${id} deleted from the ledger; left behind: ${message}`);
  await deps.db.updateTable('archive_deletions').set({ cleanup_error: message }).where('task_id', '=', result.taskId).execute();
  return { kind: 'deleted', objectDeleted: !problems.some((p) => p.part === 'objects') };
}

async function removeFromLedger(trx: Trx, id: string, deletedBy: string, held: Tuple[]): Promise<Removed | Exclude<DeleteOutcome, { kind: 'deleted' }>> {
  const task = await trx.selectFrom('archives').select('task_id').where('id', '=', id).executeTakeFirst();
  if (task === undefined) return { kind: 'missing' };
  const sub = await trx
    .selectFrom('capture_submissions')
    .select(['crawl_id', 'manifest_key'])
    .where('task_id', '=', task.task_id)
    .forUpdate()
    .executeTakeFirst();
  const row = await trx.selectFrom('archives').select(['task_id', 'bucket', 'object_key', 'url']).where('id', '=', id).forUpdate().executeTakeFirst();
  if (row === undefined) return { kind: 'missing' };
  const by = await archivesRequiring(trx, id);
  if (by.length > 0) return { kind: 'required', by };
  await trx.deleteFrom('archives').where('id', '=', id).execute();
  // the parent tuple may still wait in the outbox (its delete is queued behind it); OpenFGA's own
  // (shares, and a parent whose crawl the ledger no longer names) are deleted as they are
  const tuples = distinctTuples([...(sub?.crawl_id != null ? archiveTuples(id, sub.crawl_id) : []), ...held]);
  if (tuples.length > 0) await enqueueTuples(trx, tuples, 'delete');
  await trx
    .insertInto('archive_deletions')
    .values({ task_id: row.task_id, archive_id: id, url: row.url, deleted_by: deletedBy })
    .onConflict((oc) => oc.column('task_id').doNothing())
    .execute();
  return { kind: 'gone', taskId: row.task_id, bucket: row.bucket, key: row.object_key, manifestKey: sub?.manifest_key ?? null };
}

/** Every tuple OpenFGA holds on the archive (its parent, its shares), every page of them. */
async function tuplesOn(fga: OpenFgaClient, id: string): Promise<Tuple[]> {
  const tuples: Tuple[] = [];
  let continuationToken: string | undefined;
  do {
    const res = await fga.read(
      { object: archiveRef(id) },
      { consistency: ConsistencyPreference.HigherConsistency, ...(continuationToken ? { continuationToken } : {}) },
    );
    for (const t of res.tuples) tuples.push({ user: t.key.user, relation: t.key.relation, object: t.key.object });
    continuationToken = res.continuation_token || undefined;
  } while (continuationToken !== undefined);
  return tuples;
}

function distinctTuples(tuples: Tuple[]): Tuple[] {
  return [...new Map(tuples.map((t) => [`${t.user} ${t.relation} ${t.object}`, t])).values()];
}

type Problem = { part: 'objects' | 'index'; message: string };

/** The capture's objects out of the bucket and its pages out of the index; answers what failed. */
async function cleanUp(deps: DeleteArchiveDeps, id: string, removed: Removed): Promise<Problem[]> {
  const attempts: [Problem['part'], Promise<unknown>][] = [['objects', deleteObjects(deps.s3, removed)]];
  if (deps.search !== undefined) attempts.push(['index', forgetArchive(deps.search, id)]);
  const settled = await Promise.allSettled(attempts.map(([, p]) => p));
  return settled.flatMap((s, i) => (s.status === 'rejected' ? [{ part: attempts[i]![0], message: `${attempts[i]![0]}: ${(s.reason as Error).message}` }] : []));
}

/** Every version of the WACZ, and of each object the capture wrote beside its manifest (never a key the manifest names). */
async function deleteObjects(s3: S3Client, removed: Removed): Promise<void> {
  const listPrefix = removed.manifestKey === null ? null : captureListPrefix(removed.manifestKey, removed.taskId);
  // the flow's WACZ is one of them; an archive registered otherwise has its key of its own
  if (listPrefix === null || !isCaptureObject(removed.key, listPrefix))
    await deleteVersionsUnder(s3, removed.bucket, removed.key, (v) => v.key === removed.key);
  if (listPrefix !== null) await deleteVersionsUnder(s3, removed.bucket, listPrefix, (v) => isCaptureObject(v.key, listPrefix));
}
