// The objects a bench puts in the bucket are taken out again when it ends: the admission bench
// alone seeds some 40,000 a run, and a stack that had run it for a few days held 2.5 million of
// them (2.2 GB). What a bench killed part-way left is swept by the next run, once it is an hour
// old (a bench still running on the same stack keeps its own). The bucket keeps versions, so what
// goes is every version and delete marker under the prefix: a plain delete would only hide them.
import type { S3Client } from '@aws-sdk/client-s3';
import { createS3 } from '../src/s3/client.ts';
import { deleteVersionsUnder } from '../src/s3/delete-versions.ts';
import { benchConfig } from './support-crawl.ts';

/** Where every bench's objects live: nothing else in the bucket is touched. */
export const BENCH_PREFIX = 'bench/';

/** Objects left under BENCH_PREFIX longer than this are a finished or killed run's. */
export const LEFTOVER_AGE_MS = 60 * 60 * 1000;

/** Deletes the object versions under `prefix` (last modified before `before`, when given); answers how many went. */
export async function deleteObjectsUnder(s3: S3Client, bucket: string, prefix: string, before?: Date): Promise<number> {
  if (!prefix.startsWith(BENCH_PREFIX) || !prefix.endsWith('/')) throw new Error(`not a bench folder: ${JSON.stringify(prefix)}`);
  return deleteVersionsUnder(s3, bucket, prefix, (v) => before === undefined || (v.lastModified !== undefined && v.lastModified < before));
}

/** What earlier bench runs left under bench/ (an hour old or more), in the configured bucket; a bench runs it once, before it measures. */
export async function deleteLeftovers(): Promise<number> {
  const { s3: settings } = benchConfig();
  const s3 = createS3(settings);
  try {
    return await deleteObjectsUnder(s3, settings.bucket, BENCH_PREFIX, new Date(Date.now() - LEFTOVER_AGE_MS));
  } finally {
    s3.destroy();
  }
}

/** The objects of these crawls, each under `<folder><crawlId>/`. */
export async function deleteCrawlObjects(s3: S3Client, bucket: string, crawlIds: readonly string[], folder = BENCH_PREFIX): Promise<void> {
  for (const crawlId of crawlIds) await deleteObjectsUnder(s3, bucket, `${folder}${crawlId}/`);
}
