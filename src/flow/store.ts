// Where the flow puts what it captured. S3 (SeaweedFS in development) for real; an in-memory
// store exists only for the pacing benchmark, which measures scheduling, not uploads.
import { GetObjectCommand, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';

export interface ArtifactStore {
  readonly bucket: string;
  put(key: string, body: Buffer, contentType: string): Promise<void>;
  /** the object's bytes, or undefined when there is none (a re-dispatched level looks for the
   * manifests an earlier attempt wrote); a store without it captures every page again */
  get?(key: string): Promise<Buffer | undefined>;
}

export function s3Store(s3: S3Client, bucket: string): ArtifactStore {
  return {
    bucket,
    async put(key, body, contentType) {
      await s3.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: body, ContentType: contentType, ContentLength: body.length }));
    },
    async get(key) {
      try {
        const res = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
        return Buffer.from(await res.Body!.transformToByteArray());
      } catch (err) {
        if ((err as { name?: string }).name === 'NoSuchKey' || (err as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode === 404) return undefined;
        throw err;
      }
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
    },
    async get(key) {
      return objects.get(key)?.body;
    },
  };
}
