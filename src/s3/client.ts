import { S3Client } from '@aws-sdk/client-s3';
import type { Config } from '../config/env.ts';

/** Checksums off (they break presigned URLs on non-AWS stores) and path-style addressing. */
export function createS3(s3: Config['s3']): S3Client {
  return new S3Client({
    endpoint: s3.endpoint,
    region: s3.region,
    forcePathStyle: true,
    credentials: { accessKeyId: s3.accessKeyId, secretAccessKey: s3.secretAccessKey },
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
  });
}
