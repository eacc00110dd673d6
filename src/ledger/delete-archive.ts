// Deleting an archive from the ledger: its row, its edges and its parent tuple in one transaction
// (the tuple's delete as an outbox row), then its WACZ object. An archive another archive requires
// (its revisit records refer to payloads stored in this one) is refused, naming those archives:
// deleting it would break their replay. The row is locked first, so an admission resolving a new
// edge to it waits for the delete or makes it fail on the foreign key (ON DELETE RESTRICT).
import { DeleteObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import type { Db } from '../db/connect.ts';
import { enqueueTuples } from '../fga/outbox.ts';
import { archiveTuples } from '../fga/tuples.ts';
import { archivesRequiring, type RequiringArchive } from '../store/archive-requires.ts';

export type DeleteOutcome = { kind: 'deleted'; objectDeleted: boolean } | { kind: 'missing' } | { kind: 'required'; by: RequiringArchive[] };

export async function deleteArchive(deps: { db: Db; s3: S3Client; log?: (msg: string) => void }, id: string): Promise<DeleteOutcome> {
  const result = await deps.db.transaction().execute(async (trx) => {
    const row = await trx.selectFrom('archives').select(['id', 'task_id', 'bucket', 'object_key']).where('id', '=', id).forUpdate().executeTakeFirst();
    if (row === undefined) return { kind: 'missing' as const };
    const by = await archivesRequiring(trx, id);
    if (by.length > 0) return { kind: 'required' as const, by };
    const sub = await trx.selectFrom('capture_submissions').select('crawl_id').where('task_id', '=', row.task_id).executeTakeFirst();
    await trx.deleteFrom('archives').where('id', '=', id).execute();
    if (sub?.crawl_id != null) await enqueueTuples(trx, archiveTuples(id, sub.crawl_id), 'delete');
    return { kind: 'gone' as const, bucket: row.bucket, key: row.object_key };
  });
  if (result.kind !== 'gone') return result;
  try {
    await deps.s3.send(new DeleteObjectCommand({ Bucket: result.bucket, Key: result.key }));
    return { kind: 'deleted', objectDeleted: true };
  } catch (err) {
    // the ledger no longer hands out URLs for it; the object is left for the bucket's own cleanup
    deps.log?.(`archive ${id} deleted from the ledger; its object ${result.key} could not be deleted: ${(err as Error).message}`);
    return { kind: 'deleted', objectDeleted: false };
  }
}
