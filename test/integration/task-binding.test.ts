// Task ids are bound to their crawl (issue 29, Deliver 2), over the real stack: the API with JWTs
// from a dev issuer, the crawl workflow on a real worker, S3 and OpenFGA. Crawl B's flow holds
// B's capability and computes crawl A's task ids; whatever it reports, A's submission and archive
// stay exactly as they were, and reconcile never takes a key of another crawl's prefix in.
import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import type { Manifest, PageReport } from '../../src/domain/contract.ts';
import { admitLevel } from '../../src/ledger/admit-level.ts';
import { reconcile } from '../../src/ledger/reconcile.ts';
import { finishCrawlRow, insertCrawl, upsertLevelReport } from '../../src/store/crawls.ts';
import { capabilityHeader, levelPrefix, putJson, waitForCrawlEnd, writeCapture } from '../support/crawls.ts';
import { useHarness } from '../support/harness.ts';

const ORG_A = 'org-a';
const ORG_B = 'org-b';

const h = useHarness({
  issuer: true,
  crawls: 'stub',
  grants: [
    ['alice', 'submitter', ORG_A],
    ['mallory', 'submitter', ORG_B],
  ],
});

async function startCrawl(subject: string, org: string, seeds: string[]): Promise<string> {
  const res = await fetch(`${h.api.url}/api/crawls`, {
    method: 'POST',
    headers: { ...(await h.issuer.auth(subject, [org])), 'content-type': 'application/json' },
    body: JSON.stringify({ seeds, maxDepth: 0 }),
  });
  expect(res.status, await res.clone().text()).toBe(202);
  return ((await res.json()) as { crawlId: string }).crawlId;
}

async function report(crawlId: string, body: unknown, headers: Record<string, string>): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetch(`${h.api.url}/api/crawls/${crawlId}/levels/0`, {
    method: 'POST',
    headers: { ...headers, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

/** What a lying capturer of crawl B writes: a manifest of A's task, at B's own key for it (with `links`, a links artifact beside it). */
async function forgedUnderB(crawlB: string, taskId: string, url: string, links?: string[]): Promise<PageReport & { taskId: string; manifestKey: string }> {
  const base = `${levelPrefix(crawlB, 0)}/${taskId}`;
  const artifacts: Manifest['artifacts'] = [{ format: 'wacz', bucket: h.bucket, key: `${base}.wacz`, sha256: 'b'.repeat(64), size: 66 }];
  if (links !== undefined) {
    await putJson(h.s3, h.bucket, `${base}.links.json`, { url, finalUrl: url, links: links.map((href) => ({ href })) });
    artifacts.push({ format: 'links', bucket: h.bucket, key: `${base}.links.json`, sha256: 'c'.repeat(64), size: 10 });
  }
  const m: Manifest = {
    taskId,
    url,
    finalUrl: url,
    status: 'succeeded',
    artifacts,
    software: 'mallory',
    finishedAt: new Date().toISOString(),
  };
  await putJson(h.s3, h.bucket, `${base}.result.json`, m);
  return { url, status: 'captured', taskId, manifestKey: `${base}.result.json`, finishedAt: new Date().toISOString() };
}

/** Everything the ledger holds of these tasks. */
async function ledgerOf(taskIds: string[]) {
  return {
    submissions: await h.tdb.db.selectFrom('capture_submissions').selectAll().where('task_id', 'in', taskIds).orderBy('task_id').execute(),
    archives: await h.tdb.db.selectFrom('archives').selectAll().where('task_id', 'in', taskIds).orderBy('task_id').execute(),
  };
}

describe('a report naming another crawl’s task ids', () => {
  it('is refused with 400 naming the pages, and A’s submission and archive are unchanged', async () => {
    const a = 'http://task-a.test';
    const crawlA = await startCrawl('alice', ORG_A, [`${a}/`, `${a}/pending`]);
    const dA = await h.hook.waitFor((d) => d.body.crawlId === crawlA && d.body.depth === 0);
    const captured = await writeCapture(h.s3, h.bucket, levelPrefix(crawlA, 0), { url: `${a}/` });
    // reported with its key, manifest not (yet) there: a pending capture reconcile would pick up
    const pending = await writeCapture(h.s3, h.bucket, levelPrefix(crawlA, 0), { url: `${a}/pending`, noManifest: true });
    expect(
      (await report(crawlA, { depth: 0, pages: [captured, pending] }, { ...(await h.issuer.auth('capture-flow', [])), ...capabilityHeader(dA.body) })).status,
    ).toBe(202);
    expect(await waitForCrawlEnd(h.tdb.db, crawlA)).toMatchObject({ state: 'succeeded' });
    const before = await ledgerOf([captured.taskId, pending.taskId]);
    expect(before.submissions.map((s) => [s.task_id, s.crawl_id])).toEqual(
      [
        [captured.taskId, crawlA],
        [pending.taskId, crawlA],
      ].sort((x, y) => x[0]!.localeCompare(y[0]!)),
    );
    expect(before.archives.map((r) => r.task_id)).toEqual([captured.taskId]);

    const b = 'http://task-b.test';
    const crawlB = await startCrawl('mallory', ORG_B, [`${b}/`, `${b}/two`]);
    const dB = await h.hook.waitFor((d) => d.body.crawlId === crawlB && d.body.depth === 0);
    const stealCaptured = await forgedUnderB(crawlB, captured.taskId, `${b}/`);
    const stealPending = await forgedUnderB(crawlB, pending.taskId, `${b}/two`);
    const res = await report(
      crawlB,
      { depth: 0, pages: [stealCaptured, stealPending] },
      { ...(await h.issuer.auth('capture-flow', [])), ...capabilityHeader(dB.body) },
    );
    expect(res).toEqual({
      status: 400,
      body: {
        error: 'task ids of another crawl or level',
        detail: `a level report may name only task ids of crawl ${crawlB} level 0; these are on record for another crawl or level`,
        count: 2,
        pages: [
          { url: `${b}/`, taskId: captured.taskId },
          { url: `${b}/two`, taskId: pending.taskId },
        ],
      },
    });
    expect(await h.tdb.db.selectFrom('crawl_level_reports').selectAll().where('crawl_id', '=', crawlB).execute()).toEqual([]);
    expect(await ledgerOf([captured.taskId, pending.taskId])).toEqual(before);

    // B's own task ids are still taken, and its crawl ends as usual
    const own = await writeCapture(h.s3, h.bucket, levelPrefix(crawlB, 0), { url: `${b}/` });
    expect((await report(crawlB, { depth: 0, pages: [own] }, { ...(await h.issuer.auth('capture-flow', [])), ...capabilityHeader(dB.body) })).status).toBe(202);
    expect(await waitForCrawlEnd(h.tdb.db, crawlB)).toMatchObject({ state: 'succeeded' });
    expect(await ledgerOf([captured.taskId, pending.taskId])).toEqual(before);
    const tuplesOfA = await h.store.client.read({ user: `capture_job:${crawlA}`, relation: 'parent', object: 'archive:' });
    expect(tuplesOfA.tuples.map((t) => t.key.object)).toEqual([`archive:${before.archives[0]!.id}`]);
  });

  it('stored without the API check, admission fails the page and leaves A’s rows as they are', async () => {
    const { a, before } = await admittedTaskOfA('http://adm-a.test/');

    const crawlB = await bareCrawl('mallory', ORG_B, 'http://adm-b.test/');
    const forged = await forgedUnderB(crawlB, a.taskId, 'http://adm-b.test/');
    await upsertLevelReport(h.tdb.db, crawlB, 0, { depth: 0, pages: [forged] }, 'capture-flow');
    const admitted = await admitLevel({ db: h.tdb.db, s3: h.s3, bucket: h.bucket }, { crawlId: crawlB, depth: 0, expand: false });
    expect(admitted).toMatchObject({ captured: 0, failed: 1, archivesCreated: 0 });
    expect(await ledgerOf([a.taskId])).toEqual(before);
    expect(await h.tdb.db.selectFrom('crawl_pages').select(['state', 'task_id']).where('crawl_id', '=', crawlB).execute()).toEqual([
      { state: 'failed', task_id: null },
    ]);
    expect(await h.tdb.db.selectFrom('capture_submissions').select('task_id').where('crawl_id', '=', crawlB).execute()).toEqual([]);
  });

  it('in a crawl that goes deeper, the forged page’s links are never followed; B’s own page’s are', async () => {
    const { a, before } = await admittedTaskOfA('http://deeper-a.test/');

    // B goes one level deeper: its own page's links are read and followed, and a forged links artifact waits beside the forged manifest
    const b = 'http://deeper-b.test';
    const crawlB = await bareCrawl('mallory', ORG_B, [`${b}/`, `${b}/forged`], 1);
    const own = await writeCapture(h.s3, h.bucket, levelPrefix(crawlB, 0), { url: `${b}/`, links: [{ href: '/own' }] });
    const forged = await forgedUnderB(crawlB, a.taskId, `${b}/forged`, ['/stolen']);
    await upsertLevelReport(h.tdb.db, crawlB, 0, { depth: 0, pages: [own, forged] }, 'capture-flow');
    const admitted = await admitLevel({ db: h.tdb.db, s3: h.s3, bucket: h.bucket }, { crawlId: crawlB, depth: 0, expand: true });
    expect(admitted).toMatchObject({ captured: 1, failed: 1, archivesCreated: 1, linksRead: 1, nextLevelPages: 1 });
    const pagesOfB = await h.tdb.db
      .selectFrom('crawl_pages')
      .select(['url', 'depth', 'state', 'task_id'])
      .where('crawl_id', '=', crawlB)
      .orderBy('url')
      .execute();
    expect(pagesOfB).toEqual([
      { url: `${b}/`, depth: 0, state: 'captured', task_id: own.taskId },
      { url: `${b}/forged`, depth: 0, state: 'failed', task_id: null },
      { url: `${b}/own`, depth: 1, state: 'pending', task_id: null },
    ]);
    expect(await ledgerOf([a.taskId])).toEqual(before);
  });
});

describe('reconcile', () => {
  it('registers nothing for a row whose key has another crawl’s prefix', async () => {
    // reconcile sweeps the whole ledger: only this test's rows are pending
    await sql`TRUNCATE crawls, capture_submissions, archives, fga_outbox CASCADE`.execute(h.tdb.db);
    const crawlA = await bareCrawl('alice', ORG_A, 'http://rec-a.test/');
    const crawlB = await bareCrawl('mallory', ORG_B, 'http://rec-b.test/');
    const a = await writeCapture(h.s3, h.bucket, levelPrefix(crawlA, 0), { url: 'http://rec-a.test/', noManifest: true });
    await upsertLevelReport(h.tdb.db, crawlA, 0, { depth: 0, pages: [a] }, 'capture-flow');
    await admitLevel({ db: h.tdb.db, s3: h.s3, bucket: h.bucket }, { crawlId: crawlA, depth: 0, expand: false });
    // A's row pointed at a real manifest of A's task under B's prefix, as the old upsert left it
    const forged = await forgedUnderB(crawlB, a.taskId, 'http://rec-a.test/');
    await h.tdb.db.updateTable('capture_submissions').set({ manifest_key: forged.manifestKey }).where('task_id', '=', a.taskId).execute();

    const result = await reconcile({ db: h.tdb.db, s3: h.s3, bucket: h.bucket });
    expect(result).toEqual({ pending: 1, registered: 0, skipped: 1, missing: 0, unreadable: 0, skippedBy: { 'other-crawl': 1 }, pagesCorrected: 0 });
    expect(await h.tdb.db.selectFrom('archives').selectAll().execute()).toEqual([]);
    // the crawls' own tuples are queued, no archive's
    expect(await h.tdb.db.selectFrom('fga_outbox').selectAll().where('object', 'like', 'archive:%').execute()).toEqual([]);
    expect(await h.tdb.db.selectFrom('crawl_pages').select('state').where('crawl_id', '=', crawlA).execute()).toEqual([{ state: 'captured' }]);

    // the same row with its own crawl's key is registered: the check is the prefix, nothing else
    const ownKey = await writeCapture(h.s3, h.bucket, levelPrefix(crawlA, 0), { url: 'http://rec-a.test/' });
    await h.tdb.db
      .updateTable('capture_submissions')
      .set({ task_id: ownKey.taskId, manifest_key: ownKey.manifestKey })
      .where('task_id', '=', a.taskId)
      .execute();
    expect(await reconcile({ db: h.tdb.db, s3: h.s3, bucket: h.bucket })).toMatchObject({ pending: 1, registered: 1 });
  });
});

/** Crawl A's one page reported and admitted, its manifest not (yet) written: A holds the task's submission. */
async function admittedTaskOfA(url: string): Promise<{ a: PageReport & { taskId: string }; before: Awaited<ReturnType<typeof ledgerOf>> }> {
  const crawlA = await bareCrawl('alice', ORG_A, url);
  const a = await writeCapture(h.s3, h.bucket, levelPrefix(crawlA, 0), { url, noManifest: true });
  await upsertLevelReport(h.tdb.db, crawlA, 0, { depth: 0, pages: [a] }, 'capture-flow');
  await admitLevel({ db: h.tdb.db, s3: h.s3, bucket: h.bucket }, { crawlId: crawlA, depth: 0, expand: false });
  const before = await ledgerOf([a.taskId]);
  expect(before.submissions).toHaveLength(1);
  return { a, before };
}

/** A crawl row with its seed level and nothing running for it (admission and reconcile are called directly). */
async function bareCrawl(submittedBy: string, orgId: string, seed: string | string[], maxDepth = 0): Promise<string> {
  const seeds = typeof seed === 'string' ? [seed] : seed;
  const { id } = await insertCrawl(h.tdb.db, {
    orgId,
    submittedBy,
    seeds,
    rules: [{ follow: 'same-origin' }],
    maxDepth,
    maxPages: 10,
    perHostDelayMs: 0,
    hostParallelism: 1,
    formats: ['wacz'],
    signing: false,
    seedLevel: { take: seeds, cut: [] },
  });
  await finishCrawlRow(h.tdb.db, id, { state: 'succeeded', stopReason: 'max_depth' });
  return id;
}
