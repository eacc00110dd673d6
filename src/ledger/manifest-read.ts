// Reading what a capturer wrote: a manifest (`<key>.result.json`, at exactly the reported key) and
// a links artifact. Shared by level admission and reconcile. Nothing here throws: every outcome
// is a value (ManifestRead, ObjectRead).
import { GetObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { checkManifestTask, checkPlacement, manifestKeyProblem, parseLinksArtifact, parseManifest, type ManifestRead } from '../domain/admission.ts';
import type { ManifestLink } from '../domain/contract.ts';
import { MAX_MANIFEST_BYTES, MAX_OBJECT_BYTES, type ObjectRead, type ObjectReader } from '../s3/object-reader.ts';

/** Where objects are read: the lean signed-GET reader, or the SDK client. */
export type ObjectSource = S3Client | ObjectReader;

export async function readObjectText(s3: S3Client, bucket: string, key: string, maxBytes = MAX_OBJECT_BYTES, versionId?: string): Promise<ObjectRead> {
  try {
    const ac = new AbortController();
    const res = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: key, ...(versionId !== undefined ? { VersionId: versionId } : {}) }), {
      abortSignal: AbortSignal.any([ac.signal, AbortSignal.timeout(30_000)]),
    });
    if ((res.ContentLength ?? 0) > maxBytes) {
      ac.abort();
      return { kind: 'too-large', error: `S3 GET ${bucket}/${key}: object of ${res.ContentLength} bytes, larger than ${maxBytes}` };
    }
    return { kind: 'ok', text: (await res.Body?.transformToString('utf8')) ?? '' };
  } catch (err) {
    const e = err as { name?: string; $metadata?: { httpStatusCode?: number }; message?: string };
    if (e.name === 'NoSuchKey' || e.$metadata?.httpStatusCode === 404) return { kind: 'missing' };
    return { kind: 'unreadable', error: `${e.name ?? 'Error'}: ${e.message ?? String(err)}` };
  }
}

function readText(source: ObjectSource, bucket: string, key: string, maxBytes: number, versionId: string | undefined): Promise<ObjectRead> {
  return 'read' in source ? source.read(bucket, key, maxBytes, versionId) : readObjectText(source, bucket, key, maxBytes, versionId);
}

/**
 * Reads `<key>.result.json` at exactly the reported key: the version reported, when one was (what
 * was put over the key since, by whichever capture worker, is not read).
 */
export async function readManifest(source: ObjectSource, bucket: string, key: string, versionId?: string): Promise<ManifestRead> {
  const r = await readText(source, bucket, key, MAX_MANIFEST_BYTES, versionId);
  if (r.kind === 'too-large') return { kind: 'invalid', error: r.error };
  if (r.kind !== 'ok') return r;
  try {
    return { kind: 'ok', manifest: parseManifest(r.text) };
  } catch (err) {
    return { kind: 'invalid', error: (err as Error).message };
  }
}

/** A page's manifest, read only when its key is where the level's must be, and refused when it
 * names artifacts anywhere else. */
export async function placedManifest(
  source: ObjectSource,
  bucket: string,
  at: { taskId: string; manifestKey: string; manifestVersionId?: string; prefix?: string },
): Promise<ManifestRead> {
  const keyProblem = manifestKeyProblem(at);
  if (keyProblem !== null) return { kind: 'refused', error: keyProblem };
  return checkPlacement(checkManifestTask(await readManifest(source, bucket, at.manifestKey, at.manifestVersionId), at.taskId), { ...at, bucket });
}

/** A links artifact's links (the version its manifest names, when it names one), or why they could not be had. */
export async function readLinks(
  source: ObjectSource,
  at: { bucket: string; key: string; versionId?: string },
): Promise<{ links: ManifestLink[] } | { error: string }> {
  const r = await readText(source, at.bucket, at.key, MAX_OBJECT_BYTES, at.versionId);
  if (r.kind !== 'ok') return { error: r.kind === 'missing' ? 'missing' : r.error };
  try {
    return { links: parseLinksArtifact(r.text).links };
  } catch (err) {
    return { error: (err as Error).message };
  }
}
