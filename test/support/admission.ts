// admitLevel's dependencies as the admission tests give them: the file's database and S3 client,
// the test bucket, and the real object reader (made before the file's tests, closed after them).
import type { S3Client } from '@aws-sdk/client-s3';
import { afterAll, beforeAll } from 'vitest';
import type { Config } from '../../src/config/env.ts';
import type { AdmitDeps } from '../../src/ledger/admit-level.ts';
import { createObjectReader, type ObjectReader } from '../../src/s3/object-reader.ts';
import type { TestDatabase } from './db.ts';

/** `deps` is set once `from` can give the database, the S3 client and the configuration (a beforeAll registered before this one). */
export function useAdmitDeps(from: () => { tdb: TestDatabase; s3: S3Client; config: Config }): { deps: AdmitDeps & { reader: ObjectReader } } {
  const holder = {} as { deps: AdmitDeps & { reader: ObjectReader } };
  beforeAll(() => {
    const { tdb, s3, config } = from();
    holder.deps = { db: tdb.db, s3, reader: createObjectReader(config.s3), bucket: config.s3.bucket };
  });
  afterAll(() => {
    holder.deps?.reader.close();
  });
  return holder;
}
