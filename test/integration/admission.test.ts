// Level admission against the real Postgres and S3, without Temporal: idempotence, the page cap,
// what a report may and may not change, and the decisions it records.
import { beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import type { S3Client } from '@aws-sdk/client-s3';
import type { Config } from '../../src/config/env.ts';
import type { PageReport } from '../../src/domain/contract.ts';
import { mapLimit } from '../../src/domain/map-limit.ts';
import { admitLevel } from '../../src/ledger/admit-level.ts';
import { deleteArchive } from '../../src/ledger/delete-archive.ts';
import type { ObjectReader } from '../../src/s3/object-reader.ts';
import { recordSubmissions, registerCapture, registerCaptures } from '../../src/ledger/register.ts';
import { admissionCrawl, getCrawl, upsertLevelReport } from '../../src/store/crawls.ts';
import { useAdmitDeps } from '../support/admission.ts';
import { insertTestCrawl } from '../support/crawl-rows.ts';
import type { TestDatabase } from '../support/db.ts';
import { putJson, writeCapture } from '../support/crawls.ts';
import { useHarness } from '../support/harness.ts';

const h = useHarness({ api: false });
let tdb: TestDatabase;
let s3: S3Client;
let config: Config;

beforeAll(() => {
  ({ tdb, config, s3 } = h);
});
const admission = useAdmitDeps(() => h);

const crawlWith = (seeds: string[], limits: { maxDepth: number; maxPages: number }): Promise<string> =>
  insertTestCrawl(tdb.db, {
    seeds,
    rules: [{ skip: 'https://a.test/ads' }, { follow: 'same-origin' }, { capture: 'https://b.test/' }],
    ...limits,
    hostParallelism: 2,
    dispatchedDepth: 0,
  });

/** The crawl's pages of one level, in the order they were written: url, state and skip reason. */
const levelRows = (crawlId: string, depth: number) =>
  tdb.db.selectFrom('crawl_pages').select(['url', 'state', 'skip_reason']).where('crawl_id', '=', crawlId).where('depth', '=', depth).orderBy('id').execute();

const snapshot = async (crawlId: string) => ({
  pages: await tdb.db
    .selectFrom('crawl_pages')
    .select(['url', 'depth', 'state', 'skip_reason', 'task_id', 'action', 'submitted_at', 'finished_at'])
    .where('crawl_id', '=', crawlId)
    .orderBy('id')
    .execute(),
  archives: await tdb.db.selectFrom('archives').select(['id', 'task_id', 'object_key']).orderBy('task_id').execute(),
  outbox: await tdb.db.selectFrom('fga_outbox').select(['tuple_user', 'relation', 'object']).orderBy('id').execute(),
  submissions: await tdb.db.selectFrom('capture_submissions').selectAll().orderBy('task_id').execute(),
  decisions: await tdb.db
    .selectFrom('crawl_decisions')
    .select(['depth', 'rule', 'action', 'hostname', 'links', 'samples'])
    .where('crawl_id', '=', crawlId)
    .orderBy('rule')
    .orderBy('hostname')
    .execute(),
});

describe('admitLevel', () => {
  it('admits a level, plans the next one within maxPages, and is idempotent', async () => {
    const crawlId = await crawlWith(['https://a.test/'], { maxDepth: 2, maxPages: 4 });
    const seed = await writeCapture(s3, config.s3.bucket, `adm/${crawlId}`, {
      url: 'https://a.test/',
      links: [
        { href: '/one' },
        { href: '/two' },
        { href: 'https://a.test/ads/banner' },
        { href: 'https://b.test/page' },
        { href: '/three' },
        { href: '/four' },
        { href: '/' }, // the seed itself: already a page, does not land again
        { href: 'https://c.test/' },
      ],
    });
    const stray: PageReport = { url: 'https://a.test/never-dispatched', status: 'captured', taskId: 'stray-task', manifestKey: 'nope.json' };
    await upsertLevelReport(tdb.db, crawlId, 0, { depth: 0, pages: [seed, stray] }, 'capture-flow');

    const first = await admitLevel(admission.deps, { crawlId, depth: 0, expand: true });
    expect(first).toMatchObject({
      pages: 1,
      captured: 1,
      failed: 0,
      archivesCreated: 1,
      archives: 1,
      linksRead: 1,
      nextLevelPages: 3,
      cutPages: 2,
      expanded: true,
    });
    const after = await snapshot(crawlId);
    // candidates in the order found; the cap (4 pages, 1 taken) keeps the first three
    expect(after.pages.map((p) => [p.url, p.depth, p.state, p.skip_reason, p.action])).toEqual([
      ['https://a.test/', 0, 'captured', null, 'follow'],
      ['https://a.test/one', 1, 'pending', null, 'follow'],
      ['https://a.test/two', 1, 'pending', null, 'follow'],
      ['https://b.test/page', 1, 'pending', null, 'capture'],
      ['https://a.test/three', 1, 'skipped', 'max_pages', 'follow'],
      ['https://a.test/four', 1, 'skipped', 'max_pages', 'follow'],
    ]);
    expect(after.pages[0]!.task_id).toBe(seed.taskId);
    expect(after.pages[0]!.finished_at?.toISOString()).toBe(seed.finishedAt);
    // the stray URL changed nothing and attributed nothing
    expect(after.submissions.map((s) => s.task_id)).toEqual([seed.taskId]);
    expect(after.archives).toHaveLength(1);
    expect(after.outbox).toEqual([
      { tuple_user: 'user:alice', relation: 'owner', object: `capture_job:${crawlId}` },
      { tuple_user: 'organization:acme', relation: 'parent', object: `capture_job:${crawlId}` },
      { tuple_user: `capture_job:${crawlId}`, relation: 'parent', object: `archive:${after.archives[0]!.id}` },
    ]);
    expect(after.decisions).toEqual([
      { depth: 0, rule: 0, action: 'skip', hostname: 'c.test', links: 1, samples: ['https://c.test/'] },
      { depth: 0, rule: 1, action: 'skip', hostname: 'a.test', links: 1, samples: ['https://a.test/ads/banner'] },
      {
        depth: 0,
        rule: 2,
        action: 'follow',
        hostname: 'a.test',
        links: 5,
        samples: ['https://a.test/one', 'https://a.test/two', 'https://a.test/three', 'https://a.test/four', 'https://a.test/'],
      },
      { depth: 0, rule: 3, action: 'capture', hostname: 'b.test', links: 1, samples: ['https://b.test/page'] },
    ]);
    const report = await tdb.db.selectFrom('crawl_level_reports').selectAll().where('crawl_id', '=', crawlId).executeTakeFirstOrThrow();
    expect(report.admitted_at).not.toBeNull();
    expect((await tdb.db.selectFrom('crawls').select('depth_reached').where('id', '=', crawlId).executeTakeFirstOrThrow()).depth_reached).toBe(0);

    // retried (the activity's completion was lost): the same rows, archives, tuples, decisions,
    // and the level's page rows not even rewritten (the same row version: transaction and place)
    const rowVersions = async (): Promise<string[]> =>
      (
        await sql<{ v: string }>`SELECT xmin::text || ctid::text AS v FROM crawl_pages WHERE crawl_id = ${crawlId} AND depth = 0 ORDER BY id`.execute(tdb.db)
      ).rows.map((r) => r.v);
    const versions = await rowVersions();
    const again = await admitLevel(admission.deps, { crawlId, depth: 0, expand: true });
    expect(again).toMatchObject({ archivesCreated: 0, archives: 1, nextLevelPages: 3, cutPages: 2 });
    expect(await snapshot(crawlId)).toEqual(after);
    expect(await rowVersions()).toEqual(versions);
  });

  it('pages the report does not mention end failed; re-reporting replaces their outcome', async () => {
    const seeds = ['https://a.test/p1', 'https://a.test/p2', 'https://a.test/p3'];
    const crawlId = await crawlWith(seeds, { maxDepth: 0, maxPages: 10 });
    const p1 = await writeCapture(s3, config.s3.bucket, `adm/${crawlId}`, { url: seeds[0]! });
    await upsertLevelReport(tdb.db, crawlId, 0, { depth: 0, pages: [p1] }, 'capture-flow');
    const r = await admitLevel(admission.deps, { crawlId, depth: 0, expand: true });
    expect(r).toMatchObject({ captured: 1, unreported: 2, failed: 2, expanded: false, nextLevelPages: 0 });
    const states = async () =>
      (await tdb.db.selectFrom('crawl_pages').select(['url', 'state']).where('crawl_id', '=', crawlId).orderBy('id').execute()).map((p) => p.state);
    expect(await states()).toEqual(['captured', 'failed', 'failed']);

    const p2 = await writeCapture(s3, config.s3.bucket, `adm/${crawlId}`, { url: seeds[1]! });
    const p3: PageReport = { url: seeds[2]!, status: 'skipped', skipReason: 'robots' };
    await upsertLevelReport(tdb.db, crawlId, 0, { depth: 0, pages: [p1, p2, p3] }, 'capture-flow');
    const r2 = await admitLevel(admission.deps, { crawlId, depth: 0, expand: true });
    expect(r2).toMatchObject({ captured: 2, skipped: 1, unreported: 0, archivesCreated: 1, archives: 2 });
    expect(await states()).toEqual(['captured', 'captured', 'skipped']);
  });

  it('a 10,000-page level is written in chunks: more rows than one INSERT may carry parameters for (65,535)', async () => {
    // every page names a manifest that was never written (left to reconcile): each becomes a
    // submission row, 7 parameters each, 70,000 in one INSERT, which Postgres refused
    const seeds = Array.from({ length: 10_000 }, (_, i) => `https://a.test/big/${i}`);
    const crawlId = await crawlWith(seeds, { maxDepth: 0, maxPages: 10_000 });
    const pages: PageReport[] = seeds.map((url, i) => ({
      url,
      status: 'captured',
      taskId: `big-${crawlId}-${i}`,
      manifestKey: `adm/${crawlId}/big-${crawlId}-${i}.result.json`,
    }));
    await upsertLevelReport(tdb.db, crawlId, 0, { depth: 0, pages }, 'capture-flow');
    const r = await admitLevel({ ...admission.deps, readConcurrency: 64 }, { crawlId, depth: 0, expand: true });
    expect(r).toMatchObject({ pages: 10_000, archivesCreated: 0 });
    const rows = await tdb.db
      .selectFrom('capture_submissions')
      .select(['task_id', 'manifest_key'])
      .where('crawl_id', '=', crawlId)
      .orderBy('task_id')
      .execute();
    expect(rows).toHaveLength(10_000);
    expect(new Set(rows.map((x) => x.task_id)).size).toBe(10_000);
    expect(rows.every((x) => x.manifest_key === `adm/${crawlId}/${x.task_id}.result.json`)).toBe(true);
  });

  it('seeds beyond maxPages are recorded as cut, never dispatched', async () => {
    const crawlId = await crawlWith(['https://a.test/s1', 'https://a.test/s2', 'https://a.test/s3'], { maxDepth: 0, maxPages: 2 });
    const pages = await tdb.db.selectFrom('crawl_pages').select(['url', 'state', 'skip_reason']).where('crawl_id', '=', crawlId).orderBy('id').execute();
    expect(pages).toEqual([
      { url: 'https://a.test/s1', state: 'pending', skip_reason: null },
      { url: 'https://a.test/s2', state: 'pending', skip_reason: null },
      { url: 'https://a.test/s3', state: 'skipped', skip_reason: 'max_pages' },
    ]);
  });

  it('links that are already pages of the crawl take no place under the budget', async () => {
    // the next level is cut as it lands (it had no rows): only the rows that land are counted
    const crawlId = await crawlWith(['https://a.test/', 'https://a.test/two'], { maxDepth: 1, maxPages: 4 });
    const seed = await writeCapture(s3, config.s3.bucket, `adm/${crawlId}`, {
      url: 'https://a.test/',
      links: [{ href: '/two' }, { href: '/' }, { href: '/n1' }, { href: '/n2' }, { href: '/n3' }],
    });
    await upsertLevelReport(tdb.db, crawlId, 0, { depth: 0, pages: [seed] }, 'capture-flow');
    expect(await admitLevel(admission.deps, { crawlId, depth: 0, expand: true })).toMatchObject({ nextLevelPages: 2, cutPages: 1, unreported: 1 });
    const next = await levelRows(crawlId, 1);
    expect(next).toEqual([
      { url: 'https://a.test/n1', state: 'pending', skip_reason: null },
      { url: 'https://a.test/n2', state: 'pending', skip_reason: null },
      { url: 'https://a.test/n3', state: 'skipped', skip_reason: 'max_pages' },
    ]);
  });

  it('a manifest the ledger cannot hold as written fails only its own page, never the level', async () => {
    // a NUL in a string (Postgres text and jsonb refuse it), a fractional or negative size (bigint
    // refuses it), a date past year 9999: the capturer wrote them, the level must still go in
    const seeds = ['https://a.test/ok', 'https://a.test/nul', 'https://a.test/size', 'https://a.test/date'];
    const crawlId = await crawlWith(seeds, { maxDepth: 0, maxPages: 10 });
    const reports = await mapLimit(seeds, 4, (url) => writeCapture(s3, config.s3.bucket, `adm/${crawlId}`, { url }));
    const rewrite = async (i: number, edit: (m: Record<string, unknown>) => void): Promise<void> => {
      const key = reports[i]!.manifestKey;
      const r = await admission.deps.reader.read(config.s3.bucket, key);
      if (r.kind !== 'ok') throw new Error(`manifest ${key}: ${r.kind}`);
      const m = JSON.parse(r.text) as Record<string, unknown>;
      edit(m);
      await putJson(s3, config.s3.bucket, key, m);
    };
    await rewrite(1, (m) => (m.software = 'capturer\u0000v1'));
    await rewrite(2, (m) => ((m.artifacts as { size: number }[])[0]!.size = 12.5));
    await rewrite(3, (m) => (m.finishedAt = '+275760-09-13T00:00:00.000Z'));
    await upsertLevelReport(tdb.db, crawlId, 0, { depth: 0, pages: reports }, 'capture-flow');

    expect(await admitLevel(admission.deps, { crawlId, depth: 0, expand: true })).toMatchObject({ pages: 4, archivesCreated: 3 });
    const archives = await tdb.db
      .selectFrom('archives')
      .select(['task_id', 'size', 'captured_at'])
      .where(
        'task_id',
        'in',
        reports.map((r) => r.taskId),
      )
      .execute();
    const byTask = new Map(archives.map((a) => [a.task_id, a]));
    expect(byTask.get(reports[0]!.taskId)?.size).toBe(1234);
    // the manifest with a NUL is not admitted: no archive, nothing written from it
    expect(byTask.has(reports[1]!.taskId)).toBe(false);
    expect(byTask.get(reports[2]!.taskId)?.size).toBeNull();
    // the date falls back to the report's finish
    expect(byTask.get(reports[3]!.taskId)?.captured_at.toISOString()).toBe(reports[3]!.finishedAt);
  });

  it('registerCapture: archive and tuple together, once', async () => {
    const crawlId = await crawlWith(['https://a.test/r'], { maxDepth: 0, maxPages: 1 });
    const archive = {
      taskId: `reg-${crawlId}`,
      bucket: 'captures',
      objectKey: `reg/${crawlId}.wacz`,
      url: 'https://a.test/r',
      finalUrl: null,
      sha256: null,
      size: null,
      capturedAt: new Date().toISOString(),
      provenance: {},
    };
    const outboxBefore = (await tdb.db.selectFrom('fga_outbox').select('id').execute()).length;
    const one = await tdb.db.transaction().execute((trx) => registerCapture(trx, archive, crawlId));
    const two = await tdb.db.transaction().execute((trx) => registerCapture(trx, archive, crawlId));
    expect(one.created).toBe(true);
    expect(two).toEqual({ taskId: archive.taskId, archiveId: one.archiveId, created: false });
    expect((await tdb.db.selectFrom('fga_outbox').select('id').execute()).length).toBe(outboxBefore + 1);
    // rolled back with its transaction: neither the row nor the tuple lands
    const archive2 = { ...archive, taskId: `reg2-${crawlId}`, objectKey: `reg2/${crawlId}.wacz` };
    await expect(
      tdb.db.transaction().execute(async (trx) => {
        await registerCapture(trx, archive2, crawlId);
        throw new Error('rolled back');
      }),
    ).rejects.toThrow('rolled back');
    expect(await tdb.db.selectFrom('archives').select('id').where('task_id', '=', archive2.taskId).execute()).toEqual([]);
    expect((await tdb.db.selectFrom('fga_outbox').select('id').execute()).length).toBe(outboxBefore + 1);
  });

  // The rows go in by COPY, which has no ON CONFLICT: a batch the ledger already holds some of
  // (a reconcile got there first, a repeated admission) is written by the INSERT it falls back on.
  it('registerCaptures: of a batch the ledger partly holds, exactly the rest is registered, each with one tuple', async () => {
    const crawlId = await crawlWith(['https://a.test/p'], { maxDepth: 0, maxPages: 1 });
    const archive = (n: number, key = `part/${crawlId}/${n}.wacz`) => ({
      taskId: `part-${n}-${crawlId}`,
      bucket: 'captures',
      objectKey: key,
      url: `https://a.test/p/${n}`,
      finalUrl: n === 1 ? 'https://a.test/p/1\tmoved' : null,
      sha256: null,
      size: n,
      capturedAt: '2026-12-06T10:00:00.123Z',
      provenance: { title: `page "${n}"\n`, n },
    });
    const items = (ns: number[]) => ns.map((n) => ({ archive: archive(n), crawlId }));
    const first = await tdb.db.transaction().execute((trx) => registerCaptures(trx, items([1, 2])));
    // 4's object key is 3's: held by another task, so 4 is not registered either
    const batch = [...items([1, 2, 3]), { archive: archive(4, archive(3).objectKey), crawlId }, ...items([5])];
    const second = await tdb.db.transaction().execute((trx) => registerCaptures(trx, batch));
    expect(second.map((r) => [r.taskId, r.created])).toEqual([
      [archive(1).taskId, false],
      [archive(2).taskId, false],
      [archive(3).taskId, true],
      [archive(4).taskId, false],
      [archive(5).taskId, true],
    ]);
    expect(second.slice(0, 2).map((r) => r.archiveId)).toEqual(first.map((r) => r.archiveId));
    expect(second[3]!.archiveId).toBe('');
    const rows = await tdb.db.selectFrom('archives').selectAll().where('task_id', 'like', `part-%-${crawlId}`).orderBy('size').execute();
    expect(rows.map((r) => [r.task_id, r.object_key, r.final_url, r.provenance])).toEqual(
      [1, 2, 3, 5].map((n) => [archive(n).taskId, archive(n).objectKey, archive(n).finalUrl, archive(n).provenance]),
    );
    expect(rows.every((r) => r.captured_at.toISOString() === '2026-12-06T10:00:00.123Z')).toBe(true);
    const objects = rows.map((r) => `archive:${r.id}`);
    const tuples = await tdb.db.selectFrom('fga_outbox').select(['tuple_user', 'relation', 'object']).where('object', 'in', objects).orderBy('id').execute();
    expect(tuples).toEqual(rows.map((r) => ({ tuple_user: `capture_job:${crawlId}`, relation: 'parent', object: `archive:${r.id}` })));
  });

  it('registerCaptures: a task whose archive was deleted is not registered again, alone or in a batch', async () => {
    const crawlId = await crawlWith(['https://a.test/d'], { maxDepth: 0, maxPages: 1 });
    const archive = (n: number) => ({
      taskId: `del-${n}-${crawlId}`,
      bucket: config.s3.bucket,
      objectKey: `del/${crawlId}/${n}.wacz`,
      url: `https://a.test/d/${n}`,
      finalUrl: null,
      sha256: null,
      size: n,
      capturedAt: new Date().toISOString(),
      provenance: {},
    });
    const items = (ns: number[]) => ns.map((n) => ({ archive: archive(n), crawlId }));
    const first = await tdb.db.transaction().execute((trx) => registerCaptures(trx, items([1, 2])));
    for (const r of first) expect(await deleteArchive({ db: tdb.db, s3 }, r.archiveId, 'alice')).toMatchObject({ kind: 'deleted' });
    const alone = await tdb.db.transaction().execute((trx) => registerCaptures(trx, items([1])));
    expect(alone).toEqual([{ taskId: archive(1).taskId, archiveId: '', created: false }]);
    const batch = await tdb.db.transaction().execute((trx) => registerCaptures(trx, items([1, 2, 3])));
    expect(batch.map((r) => [r.taskId, r.created, r.archiveId === ''])).toEqual([
      [archive(1).taskId, false, true],
      [archive(2).taskId, false, true],
      [archive(3).taskId, true, false],
    ]);
    const rows = await tdb.db.selectFrom('archives').select('task_id').where('task_id', 'like', `del-%-${crawlId}`).execute();
    expect(rows).toEqual([{ task_id: archive(3).taskId }]);
    // and no second tuple for the deleted ones: one write each (their first registration's), and 3's
    const queued = await tdb.db
      .selectFrom('fga_outbox')
      .select('object')
      .where('tuple_user', '=', `capture_job:${crawlId}`)
      .where('operation', '=', 'write')
      .execute();
    expect(queued.map((q) => q.object).sort()).toEqual([...first, batch[2]!].map((r) => `archive:${r.archiveId}`).sort());
  });

  it("recordSubmissions: a task of another crawl stays that crawl's; the batch's other tasks are written", async () => {
    const [a, b] = [await crawlWith(['https://a.test/s'], { maxDepth: 0, maxPages: 1 }), await crawlWith(['https://b.test/s'], { maxDepth: 0, maxPages: 1 })];
    const sub = (taskId: string, crawlId: string, manifestKey: string | null) => ({
      taskId,
      orgId: 'acme',
      submittedBy: 'alice',
      crawlId,
      url: `https://a.test/${taskId}`,
      manifestKey,
      manifestVersion: manifestKey === null ? null : `v-${manifestKey}`,
      manifestError: manifestKey === null ? 'failed\twith a tab' : null,
    });
    const task = (n: number) => `sub-${n}-${a}`;
    const written = await tdb.db.transaction().execute((trx) => recordSubmissions(trx, [sub(task(1), b, 'b/1.json'), sub(task(2), a, null)]));
    expect([...written].sort()).toEqual([task(1), task(2)]);
    const again = await tdb.db
      .transaction()
      .execute((trx) => recordSubmissions(trx, [sub(task(1), a, 'a/1.json'), sub(task(2), a, 'a/2.json'), sub(task(3), a, 'a/3.json')]));
    expect([...again].sort()).toEqual([task(2), task(3)]);
    const rows = await tdb.db
      .selectFrom('capture_submissions')
      .select(['task_id', 'crawl_id', 'manifest_key', 'manifest_version', 'manifest_error'])
      .where('task_id', 'like', `sub-%-${a}`)
      .orderBy('task_id')
      .execute();
    expect(rows).toEqual([
      { task_id: task(1), crawl_id: b, manifest_key: 'b/1.json', manifest_version: 'v-b/1.json', manifest_error: null },
      { task_id: task(2), crawl_id: a, manifest_key: 'a/2.json', manifest_version: 'v-a/2.json', manifest_error: null },
      { task_id: task(3), crawl_id: a, manifest_key: 'a/3.json', manifest_version: 'v-a/3.json', manifest_error: null },
    ]);
  });
});

// Admission writes pages' own rows in chunks while the rest of the level is still being read (of
// this level's 620 pages, half, then a quarter, …: the chunks shrink with what is unread). It
// ends with exactly the rows one write at the end gave — every
// page's state, one submission per task, an archive and a tuple per capture — with a task the
// report names twice settled by its last report, and a repeated admission changing nothing.
const PAGES = 620;

describe('admissionCrawl', () => {
  it('reads the seeds as the crawl holds them, whatever they contain, and what else admission plans with', async () => {
    // what a text[] literal must quote or escape, and what JSON must: quotes, commas, braces, backslashes, NULL-looking text
    const seeds = [
      'https://a.test/',
      'https://a.test/a,b',
      'https://a.test/"q"',
      'https://a.test/{x}',
      'https://a.test/back\\slash',
      'https://a.test/NULL',
      'https://ä.test/ü',
    ];
    const crawlId = await crawlWith(seeds, { maxDepth: 2, maxPages: 50 });
    const all = await getCrawl(tdb.db, crawlId);
    expect(await admissionCrawl(tdb.db, crawlId)).toEqual({
      org_id: all!.org_id,
      submitted_by: all!.submitted_by,
      rules: all!.rules,
      seeds,
      max_depth: 2,
      max_pages: 50,
      per_host_delay_ms: all!.per_host_delay_ms,
    });
    expect(all!.seeds).toEqual(seeds);
    expect(await admissionCrawl(tdb.db, '00000000-0000-4000-8000-000000000000')).toBeUndefined();
  });
});

describe('admitLevel with its page rows written while reading', () => {
  it('a level of several chunks ends with every row as one write would leave it', async () => {
    const urls = Array.from({ length: PAGES }, (_, i) => `https://a.test/p/${i}`);
    const crawlId = await crawlWith(urls, { maxDepth: 1, maxPages: PAGES * 2 });
    const prefix = `pipelined/${crawlId}/0`;
    // every 7th page failed, the rest captured with two links each
    const reported: PageReport[] = await mapLimit(urls, 16, (url, i) =>
      writeCapture(s3, config.s3.bucket, prefix, i % 7 === 3 ? { url, outcome: 'failed' } : { url, links: [{ href: `/q/${i}` }, { href: `/q/${i + 1}` }] }),
    );
    // a captured page near the end is reported under the first page's task, as failed: the task's last
    // report wins
    const shared = reported[0] as PageReport & { taskId: string };
    reported[PAGES - 2] = { url: urls[PAGES - 2]!, status: 'failed', taskId: shared.taskId, manifestError: 'reported again under another page' };
    await upsertLevelReport(tdb.db, crawlId, 0, { depth: 0, pages: reported }, 'capture-flow');
    await tdb.db
      .insertInto('level_dispatches' as never)
      .values({ crawl_id: crawlId, depth: 0, artifact_prefix: prefix } as never)
      .execute()
      .catch(() => undefined);

    const result = await admitLevel(admission.deps, { crawlId, depth: 0, expand: true });

    const failedByManifest = urls.filter((_, i) => i % 7 === 3).length;
    const captured = PAGES - failedByManifest - 1; // and the re-reported one
    expect(result).toMatchObject({ pages: PAGES, captured, failed: failedByManifest + 1, archivesCreated: captured, archives: captured });
    const pages = await tdb.db.selectFrom('crawl_pages').select(['url', 'state', 'task_id']).where('crawl_id', '=', crawlId).where('depth', '=', 0).execute();
    const stateOf = new Map(pages.map((p) => [p.url, p.state]));
    urls.forEach((url, i) => expect(stateOf.get(url), url).toBe(i === PAGES - 2 || i % 7 === 3 ? 'failed' : 'captured'));

    const submissions = await tdb.db
      .selectFrom('capture_submissions')
      .select(['task_id', 'url', 'manifest_key', 'manifest_error'])
      .where('crawl_id', '=', crawlId)
      .execute();
    // one per task: PAGES reported, two of them under one task
    expect(submissions).toHaveLength(PAGES - 1);
    expect(submissions.find((s) => s.task_id === shared.taskId)).toEqual({
      task_id: shared.taskId,
      url: urls[PAGES - 2],
      manifest_key: null,
      manifest_error: 'reported again under another page',
    });

    const archives = await tdb.db.selectFrom('archives').select(['id', 'task_id']).where('object_key', 'like', `${prefix}/%`).execute();
    // the shared task's first page was captured: its archive stands (its submission row says what was reported last)
    expect(archives).toHaveLength(captured);
    const tuples = await tdb.db.selectFrom('fga_outbox').select('object').where('tuple_user', '=', `capture_job:${crawlId}`).execute();
    expect(tuples.map((t) => t.object).sort()).toEqual(archives.map((a) => `archive:${a.id}`).sort());

    const snapshot = async () => ({
      pages: await tdb.db.selectFrom('crawl_pages').selectAll().where('crawl_id', '=', crawlId).orderBy('id').execute(),
      submissions: await tdb.db.selectFrom('capture_submissions').selectAll().where('crawl_id', '=', crawlId).orderBy('task_id').execute(),
      archives: await tdb.db.selectFrom('archives').select(['id', 'task_id']).orderBy('task_id').execute(),
      outbox: await tdb.db.selectFrom('fga_outbox').select(['tuple_user', 'relation', 'object']).orderBy('id').execute(),
    });
    const before = await snapshot();
    const again = await admitLevel(admission.deps, { crawlId, depth: 0, expand: true });
    expect(again).toMatchObject({ archivesCreated: 0, archives: captured, nextLevelPages: result.nextLevelPages });
    expect(await snapshot()).toEqual(before);
  });
});

describe('admitLevel choosing links while reading', () => {
  it('takes the next level in report order whatever order the links reads finish in', async () => {
    const n = 40;
    const urls = Array.from({ length: n }, (_, i) => `https://a.test/r/${i}`);
    // the next level has room for 10 pages: the links of pages 0–9, as the report lists them
    const crawlId = await crawlWith(urls, { maxDepth: 1, maxPages: n + 10 });
    const prefix = `ordered/${crawlId}/0`;
    const reported = await mapLimit(urls, 8, (url, i) => writeCapture(s3, config.s3.bucket, prefix, { url, links: [{ href: `/next/${i}` }] }));
    await upsertLevelReport(tdb.db, crawlId, 0, { depth: 0, pages: reported }, 'capture-flow');
    const firstTen = new Set(reported.slice(0, 10).map((p) => p.manifestKey.replace(/\.result\.json$/, '.links.json')));
    // the first ten pages' links are answered only after every other page's links have been read
    let othersRead = 0;
    let releaseFirst!: () => void;
    const othersDone = new Promise<void>((r) => (releaseFirst = r));
    const slowFirst: ObjectReader = {
      async read(bucket, key, maxBytes) {
        if (firstTen.has(key)) await othersDone;
        const r = await admission.deps.reader.read(bucket, key, maxBytes);
        if (key.endsWith('.links.json') && !firstTen.has(key) && ++othersRead === n - 10) releaseFirst();
        return r;
      },
      close() {},
    };
    const result = await admitLevel({ ...admission.deps, reader: slowFirst, readConcurrency: 16 }, { crawlId, depth: 0, expand: true });
    expect(othersRead).toBe(n - 10);
    expect(result).toMatchObject({ captured: n, linksRead: n, nextLevelPages: 10 });
    const next = await tdb.db
      .selectFrom('crawl_pages')
      .select(['url', 'state'])
      .where('crawl_id', '=', crawlId)
      .where('depth', '=', 1)
      .where('state', '=', 'pending')
      .orderBy('id')
      .execute();
    expect(next.map((p) => p.url)).toEqual(Array.from({ length: 10 }, (_, i) => `https://a.test/next/${i}`));
  });
});

describe('admitLevel inserting the next level while reading', () => {
  // Candidates are inserted in chunks (500) as the level is read. The next level must still land
  // in the order the links were chosen, cut at the page budget, and a replaced report must keep
  // the rows it still names in their old order and drop the others, as one insert at the end did.
  it('a next level of several chunks lands in the order chosen, cut at the budget; a replaced report keeps what it still names', async () => {
    const n = 300;
    const per = 4;
    const urls = Array.from({ length: n }, (_, i) => `https://a.test/c/${i}`);
    // room for 700 next-level pages; 1,200 links found
    const crawlId = await crawlWith(urls, { maxDepth: 1, maxPages: n + 700 });
    const prefix = `chunked/${crawlId}/0`;
    const linksOf = (i: number, dir: string): { href: string }[] => Array.from({ length: per }, (_, j) => ({ href: `/${dir}/${i * per + j}` }));
    const first = await mapLimit(urls, 16, (url, i) => writeCapture(s3, config.s3.bucket, prefix, { url, links: linksOf(i, 'n') }));
    await upsertLevelReport(tdb.db, crawlId, 0, { depth: 0, pages: first }, 'capture-flow');
    const nextLevel = async (): Promise<{ pending: string[]; cut: string[] }> => {
      const rows = await levelRows(crawlId, 1);
      return { pending: rows.filter((r) => r.state === 'pending').map((r) => r.url), cut: rows.filter((r) => r.skip_reason === 'max_pages').map((r) => r.url) };
    };
    const link = (dir: string, k: number): string => `https://a.test/${dir}/${k}`;
    const range = (from: number, to: number, dir: string): string[] => Array.from({ length: to - from }, (_, k) => link(dir, from + k));

    expect(await admitLevel(admission.deps, { crawlId, depth: 0, expand: true })).toMatchObject({ nextLevelPages: 700, cutPages: 500, frontierRemoved: 0 });
    expect(await nextLevel()).toEqual({ pending: range(0, 700, 'n'), cut: range(700, 1200, 'n') });

    // reported again before the next level went out: the first 100 pages now link elsewhere
    const second = [
      ...(await mapLimit(urls.slice(0, 100), 16, (url, i) => writeCapture(s3, config.s3.bucket, prefix, { url, links: linksOf(i, 'm') }))),
      ...first.slice(100),
    ];
    await upsertLevelReport(tdb.db, crawlId, 0, { depth: 0, pages: second }, 'capture-flow');
    // n/0–399 are named no more and go; n/400–1199 keep their rows and order, m/0–399 come after
    expect(await admitLevel(admission.deps, { crawlId, depth: 0, expand: true })).toMatchObject({ nextLevelPages: 700, cutPages: 500, frontierRemoved: 400 });
    expect(await nextLevel()).toEqual({ pending: range(400, 1100, 'n'), cut: [...range(1100, 1200, 'n'), ...range(0, 400, 'm')] });
  });
});
