// Presigned GETs for archive objects, path-style against the configured endpoint (as
// src/s3/client.ts addresses the bucket), signing only `host`, valid for expiresIn seconds. The
// query is what the SDK's S3RequestPresigner gives for the same request and time, computed
// directly (src/s3/sign-get.ts): through getSignedUrl and the S3 client's middleware stack it cost
// ~1.8 ms of CPU per URL here, the presigner alone ~0.2 ms, this ~0.01 ms — on the one call that
// every archive read goes through.
import type { Config } from '../config/env.ts';
import { objectPath } from '../s3/object-path.ts';
import { createGetPresigner } from '../s3/sign-get.ts';

/** versionId: of that version of the object (archives.object_version), else of the key as it is */
export type UrlSigner = (bucket: string, key: string, expiresIn: number, versionId?: string | null) => Promise<string>;

export function createUrlSigner(s3: Config['s3']): UrlSigner {
  const endpoint = new URL(s3.endpoint);
  const basePath = endpoint.pathname;
  const presign = createGetPresigner(s3);
  return async (bucket, key, expiresIn, versionId) => {
    const path = objectPath(basePath, bucket, key);
    return `${endpoint.protocol}//${endpoint.host}${path}?${presign(endpoint.host, path, expiresIn, versionId != null ? { versionId } : {})}`;
  };
}
