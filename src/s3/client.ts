import { S3Client } from '@aws-sdk/client-s3';
import type { Config } from '../config/env.ts';
import { s3ClientOptions } from '../domain/s3-client-options.ts';

/** The ledger's S3 client: checksums off (they break presigned URLs on non-AWS stores) and path-style addressing. */
export function createS3(s3: Config['s3']): S3Client {
  return new S3Client(s3ClientOptions(s3));
}
