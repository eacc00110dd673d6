// Deleting from a bucket that keeps versions: a plain DELETE only hides an object behind a delete
// marker, so what goes is every version and every delete marker of the keys chosen. An unversioned
// bucket lists its one object as version 'null', as does a versioned one an object put before
// versioning was on.
import { DeleteObjectsCommand, ListObjectVersionsCommand, type ListObjectVersionsCommandOutput, type S3Client } from '@aws-sdk/client-s3';

export interface ListedVersion {
  key: string;
  versionId: string;
  lastModified: Date | undefined;
}

/** The versions and delete markers under `prefix`, a listing page (up to 1,000) at a time. */
export async function* versionsUnder(s3: S3Client, bucket: string, prefix: string): AsyncGenerator<ListedVersion[]> {
  let marker: { KeyMarker?: string; VersionIdMarker?: string } | undefined = {};
  do {
    const listed: ListObjectVersionsCommandOutput = await s3.send(new ListObjectVersionsCommand({ Bucket: bucket, Prefix: prefix, ...marker }));
    yield [...(listed.Versions ?? []), ...(listed.DeleteMarkers ?? [])].map((v) => ({
      key: v.Key!,
      versionId: v.VersionId ?? 'null',
      lastModified: v.LastModified,
    }));
    const next = {
      ...(listed.NextKeyMarker ? { KeyMarker: listed.NextKeyMarker } : {}),
      ...(listed.NextVersionIdMarker ? { VersionIdMarker: listed.NextVersionIdMarker } : {}),
    };
    marker = listed.IsTruncated && Object.keys(next).length > 0 ? next : undefined;
  } while (marker !== undefined);
}

/**
 * Deletes every version and delete marker under `prefix` that `chosen` picks (a prefix also lists
 * longer keys: `x.wacz` lists `x.wacz.bak`); answers how many went. Throws when the bucket refuses any.
 */
export async function deleteVersionsUnder(s3: S3Client, bucket: string, prefix: string, chosen: (v: ListedVersion) => boolean): Promise<number> {
  let deleted = 0;
  for await (const page of versionsUnder(s3, bucket, prefix)) {
    const objects = page.filter(chosen).map((v) => ({ Key: v.key, VersionId: v.versionId }));
    if (objects.length === 0) continue;
    const res = await s3.send(new DeleteObjectsCommand({ Bucket: bucket, Delete: { Objects: objects, Quiet: true } }));
    const errors = res.Errors ?? [];
    if (errors.length > 0) throw new Error(`bucket ${bucket} refused to delete ${errors.length} of ${objects.length} under ${prefix}: ${errors[0]!.Message}`);
    deleted += objects.length;
  }
  return deleted;
}
