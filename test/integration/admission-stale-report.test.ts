// Admission admits the report it was asked for: when the level's current report is another one (a
// newer report replaced it), it fails with a non-retryable StaleReport and writes nothing — whether
// the report was replaced before admission began or while it was reading.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { S3Client } from '@aws-sdk/client-s3';
import { ApplicationFailure } from '@temporalio/common';
import { NON_RETRYABLE } from '../../temporal.config.ts';
import type { Config } from '../../src/config/env.ts';
import { admitLevel } from '../../src/ledger/admit-level.ts';
import type { ObjectReader } from '../../src/s3/object-reader.ts';
import { createS3 } from '../../src/s3/client.ts';
import { upsertLevelReport } from '../../src/store/crawls.ts';
import { useAdmitDeps } from '../support/admission.ts';
import { insertTestCrawl } from '../support/crawl-rows.ts';
import { createTestDatabase, type TestDatabase } from '../support/db.ts';
import { testConfig } from '../support/config.ts';
import { writeCapture } from '../support/crawls.ts';

let tdb: TestDatabase;
let s3: S3Client;
let config: Config;

beforeAll(async () => {
  tdb = await createTestDatabase();
  config = testConfig({ CAPTURE_LEDGER_FGA_STORE_ID: 'x', CAPTURE_LEDGER_FGA_MODEL_ID: 'x' });
  s3 = createS3(config.s3);
});

afterAll(async () => {
  s3?.destroy();
  await tdb?.drop();
});
// registered after the file's own hooks: made once they have run, closed before they tear down
const admission = useAdmitDeps(() => ({ tdb, s3, config }));

/** A running crawl whose seed level was captured and reported; the report's id. */
async function reportedLevel(): Promise<{ crawlId: string; reportId: string; body: unknown }> {
  const crawlId = await insertTestCrawl(tdb.db, { dispatchedDepth: 0 });
  const page = await writeCapture(s3, config.s3.bucket, `stale/${crawlId}`, { url: 'https://a.test/', links: [{ href: '/one' }] });
  const body = { depth: 0, pages: [page] };
  const { reportId } = await upsertLevelReport(tdb.db, crawlId, 0, body, 'capture-flow');
  return { crawlId, reportId, body };
}

/** What admission would have written for the crawl. */
async function written(crawlId: string) {
  return {
    submissions: (await tdb.db.selectFrom('capture_submissions').select('task_id').where('crawl_id', '=', crawlId).execute()).length,
    pages: await tdb.db.selectFrom('crawl_pages').select(['url', 'depth', 'state']).where('crawl_id', '=', crawlId).orderBy('id').execute(),
    admittedAt: (await tdb.db.selectFrom('crawl_level_reports').select('admitted_at').where('crawl_id', '=', crawlId).executeTakeFirstOrThrow()).admitted_at,
    depthReached: (await tdb.db.selectFrom('crawls').select('depth_reached').where('id', '=', crawlId).executeTakeFirstOrThrow()).depth_reached,
  };
}

async function expectStale(p: Promise<unknown>): Promise<void> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ApplicationFailure);
  expect((err as ApplicationFailure).type).toBe(NON_RETRYABLE.staleReport);
  expect((err as ApplicationFailure).nonRetryable).toBe(true);
}

describe('admitLevel with a report id', () => {
  it('admits the level when the id is its current report', async () => {
    const { crawlId, reportId } = await reportedLevel();
    const r = await admitLevel(admission.deps, { crawlId, depth: 0, reportId, expand: true });
    expect(r).toMatchObject({ reportId, pages: 1, captured: 1, archivesCreated: 1, nextLevelPages: 1 });
  });

  it('fails with StaleReport and writes nothing when a newer report replaced it', async () => {
    const { crawlId, reportId, body } = await reportedLevel();
    const before = await written(crawlId);
    const newer = await upsertLevelReport(tdb.db, crawlId, 0, body, 'capture-flow');
    expect(newer.reportId).not.toBe(reportId);
    await expectStale(admitLevel(admission.deps, { crawlId, depth: 0, reportId, expand: true }));
    expect(await written(crawlId)).toEqual(before);
    expect(before).toMatchObject({ submissions: 0, pages: [{ url: 'https://a.test/', depth: 0, state: 'pending' }], admittedAt: null });
    // the newer report is admitted as usual
    expect(await admitLevel(admission.deps, { crawlId, depth: 0, reportId: newer.reportId, expand: true })).toMatchObject({
      reportId: newer.reportId,
      captured: 1,
    });
  });

  it('fails with StaleReport and writes nothing when the report is replaced while its manifests are read', async () => {
    const { crawlId, reportId, body } = await reportedLevel();
    const before = await written(crawlId);
    let replaced = false;
    // the real reader; the level is reported again as the first manifest is read
    const replacing: ObjectReader = {
      async read(bucket, key, maxBytes) {
        if (!replaced) {
          replaced = true;
          await upsertLevelReport(tdb.db, crawlId, 0, body, 'capture-flow');
        }
        return admission.deps.reader.read(bucket, key, maxBytes);
      },
      close() {},
    };
    await expectStale(admitLevel({ ...admission.deps, reader: replacing }, { crawlId, depth: 0, reportId, expand: true }));
    expect(replaced).toBe(true);
    expect(await written(crawlId)).toEqual(before);
  });
});
