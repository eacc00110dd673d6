// Deleting an archive from the ledger: its row, its edges and its parent tuple in one transaction
// (the tuple's delete as an outbox row), then its WACZ object. An archive another archive requires
// (its revisit records refer to payloads stored in this one) is refused, naming those archives:
// deleting it would break their replay. The row is locked first, so an admission resolving a new
// edge to it waits for the delete or makes it fail on the foreign key (ON DELETE RESTRICT).
// The bucket keeps versions (archives.object_version): a plain DELETE would only hide the bytes
// behind a delete marker, so every version of the key goes, the marker with them.
import { DeleteObjectCommand, ListObjectVersionsCommand, type S3Client } from '@aws-sdk/client-s3';
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
    await deleteEveryVersion(deps.s3, result.bucket, result.key);
    return { kind: 'deleted', objectDeleted: true };
  } catch (err) {
    // the ledger no longer hands out URLs for it; the object is left for the bucket's own cleanup
    deps.log?.(`archive ${id} deleted from the ledger; its object ${result.key} could not be deleted: ${(err as Error).message}`);
    return { kind: 'deleted', objectDeleted: false };
  }
}

/**
 * Every version of the key and every delete marker over it. An unversioned bucket lists its one
 * object as version 'null', as does a versioned one an object put before versioning was on.
 */
async function deleteEveryVersion(s3: S3Client, bucket: string, key: string): Promise<void> {
  let marker: { KeyMarker?: string; VersionIdMarker?: string } = {};
  for (;;) {
    const page = await s3.send(new ListObjectVersionsCommand({ Bucket: bucket, Prefix: key, ...marker }));
    // the prefix also lists longer keys (x.wacz.bak): only the key's own go
    const own = [...(page.Versions ?? []), ...(page.DeleteMarkers ?? [])].filter((v) => v.Key === key && v.VersionId !== undefined);
    for (const v of own) await s3.send(new DeleteObjectCommand({ Bucket: bucket, Key: key, VersionId: v.VersionId }));
    if (page.IsTruncated !== true || (page.NextKeyMarker === undefined && page.NextVersionIdMarker === undefined)) return;
    marker = {
      ...(page.NextKeyMarker !== undefined ? { KeyMarker: page.NextKeyMarker } : {}),
      ...(page.NextVersionIdMarker !== undefined ? { VersionIdMarker: page.NextVersionIdMarker } : {}),
    };
  }
}
