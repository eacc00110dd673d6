// The capture worker's S3 client: its own write-only identity, with the options every client of
// the project uses (src/domain/s3-client-options.ts).
import { S3Client } from '@aws-sdk/client-s3';
import { s3ClientOptions } from '../domain/s3-client-options.ts';
import type { CaptureWorkerConfig } from './config.ts';

export function createCaptureS3(s3: CaptureWorkerConfig['s3']): S3Client {
  return new S3Client(s3ClientOptions(s3));
}
