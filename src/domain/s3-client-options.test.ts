import { describe, expect, it } from 'vitest';
import { s3ClientOptions } from './s3-client-options.ts';

describe('s3ClientOptions', () => {
  it('addresses buckets by path, checksums only where required, with the identity it is given', () => {
    const options = s3ClientOptions({ endpoint: 'http://127.0.0.1:8333', region: 'us-east-1', accessKeyId: 'worker', secretAccessKey: 'secret' });
    expect(options).toEqual({
      endpoint: 'http://127.0.0.1:8333',
      region: 'us-east-1',
      forcePathStyle: true,
      credentials: { accessKeyId: 'worker', secretAccessKey: 'secret' },
      requestChecksumCalculation: 'WHEN_REQUIRED',
      responseChecksumValidation: 'WHEN_REQUIRED',
    });
  });
});
