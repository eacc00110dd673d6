// How every S3 client of the project talks to the object store (SeaweedFS, or any S3-compatible
// store): path-style addressing, and checksums only where an operation requires them (the SDK's
// default ones break presigned URLs and uploads on non-AWS stores). The ledger's client
// (src/s3/client.ts) and the capture worker's (src/flow/s3.ts, with its own write-only identity)
// are both built from these options. Plain data: src/domain imports no SDK.
export interface S3Endpoint {
  endpoint: string;
  region: string;
  accessKeyId: string;
  secretAccessKey: string;
}

export function s3ClientOptions(s3: S3Endpoint) {
  return {
    endpoint: s3.endpoint,
    region: s3.region,
    forcePathStyle: true,
    credentials: { accessKeyId: s3.accessKeyId, secretAccessKey: s3.secretAccessKey },
    requestChecksumCalculation: 'WHEN_REQUIRED' as const,
    responseChecksumValidation: 'WHEN_REQUIRED' as const,
  };
}
