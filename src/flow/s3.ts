// The capture worker's S3 client: its own write-only identity, checksums off (they break on
// non-AWS stores) and path-style addressing, as the ledger's.
import { S3Client } from '@aws-sdk/client-s3';
import type { CaptureWorkerConfig } from './config.ts';

export function createCaptureS3(s3: CaptureWorkerConfig['s3']): S3Client {
  return new S3Client({
    endpoint: s3.endpoint,
    region: s3.region,
    forcePathStyle: true,
    credentials: { accessKeyId: s3.accessKeyId, secretAccessKey: s3.secretAccessKey },
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
  });
}
