// Where a capture worker puts what it captured: S3 (SeaweedFS in development) through its
// write-only identity — it can put objects in the bucket and nothing else. An in-memory store
// exists only for benchmarks that measure scheduling, not uploads.
import { PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';

export interface ArtifactStore {
  readonly bucket: string;
  /** the version the store gave the object, when the bucket keeps versions */
  put(key: string, body: Buffer, contentType: string): Promise<{ versionId?: string }>;
}

export function s3Store(s3: S3Client, bucket: string): ArtifactStore {
  return {
    bucket,
    async put(key, body, contentType) {
      const { VersionId } = await s3.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: body, ContentType: contentType, ContentLength: body.length }));
      // an unversioned bucket answers no version, or S3's 'null'
      return VersionId !== undefined && VersionId !== '' && VersionId !== 'null' ? { versionId: VersionId } : {};
    },
  };
}

export interface MemoryStore extends ArtifactStore {
  objects: Map<string, { body: Buffer; contentType: string }>;
}

export function memoryStore(bucket = 'memory'): MemoryStore {
  const objects = new Map<string, { body: Buffer; contentType: string }>();
  return {
    bucket,
    objects,
    async put(key, body, contentType) {
      objects.set(key, { body, contentType });
      return {};
    },
  };
}
