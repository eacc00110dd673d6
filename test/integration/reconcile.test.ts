// Reconcile over the real stack: the state a level admission leaves behind when it cannot read
// the manifests (admitLevel itself, run with an S3 client that reaches nothing), then reconcile
// with the real SeaweedFS — as a function, as the Temporal workflow on a real worker, through
// the schedule (created like the worker creates it, triggered with the real `temporal` CLI),
// and as `npm run fga:reconcile`.
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { promisify } from 'node:util';
import { HeadObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { sql } from 'kysely';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { RECONCILE_WORKFLOW } from '../../temporal.config.ts';
import type { PageReport } from '../../src/domain/contract.ts';
import { canView } from '../../src/fga/authorize.ts';
import { admitLevel } from '../../src/ledger/admit-level.ts';
import { deleteArchive } from '../../src/ledger/delete-archive.ts';
import { readManifest } from '../../src/ledger/manifest-read.ts';
import { reconcile } from '../../src/ledger/reconcile.ts';
import { createS3 } from '../../src/s3/client.ts';
import { finishCrawlRow, insertCrawl, upsertLevelReport } from '../../src/store/crawls.ts';
import { ensureSchedules, reconcileSchedule, RECONCILE_SINCE_DAYS } from '../../src/temporal/schedules.ts';
import type { reconcile as reconcileWorkflow } from '../../src/workflows/reconcile.ts';
import { eventually, putJson, writeCapture } from '../support/crawls.ts';
import { ROOT } from '../support/env.ts';
import { useHarness } from '../support/harness.ts';
import { drain } from '../support/ledger.ts';
import { uniqueTaskQueue } from '../support/temporal.ts';

const run = promisify(execFile);
const ORG = 'acme';
const DEAD_S3 = 'http://127.0.0.1:9';

/** Every command the client sends, with its key: proof of what reconcile asked the store. */
function recordCommands(client: S3Client): { command: string; bucket?: string; key?: string }[] {
  const seen: { command: string; bucket?: string; key?: string }[] = [];
  client.middlewareStack.add(
    (next, context) => async (args) => {
      const input = args.input as { Bucket?: string; Key?: string };
      seen.push({
        command: (context as { commandName?: string }).commandName ?? '?',
        ...(input.Bucket ? { bucket: input.Bucket } : {}),
        ...(input.Key ? { key: input.Key } : {}),
      });
      return next(args);
    },
    { step: 'initialize', name: `record-${randomBytes(3).toString('hex')}` },
  );
  return seen;
}

const taskQueue = uniqueTaskQueue('reconcile');
const h = useHarness({ worker: true, api: false, env: { CAPTURE_LEDGER_TEMPORAL_TASK_QUEUE: taskQueue } });
let deadS3: S3Client;

beforeAll(() => {
  deadS3 = createS3({ ...h.config.s3, endpoint: DEAD_S3 });
});

afterAll(() => {
  deadS3?.destroy();
});

// reconcile sweeps the whole ledger: each test starts from an empty one, whatever ran before it
beforeEach(async () => {
  await sql`TRUNCATE crawls, capture_submissions, archives, fga_outbox CASCADE`.execute(h.tdb.db);
});

interface Level {
  crawlId: string;
  pages: Record<string, PageReport & { taskId?: string; manifestKey?: string }>;
}

/**
 * A crawl of one level whose report names these pages, admitted while S3 was unreachable: what
 * is left is exactly what admission leaves behind — capture_submissions with their manifest
 * keys, crawl_pages as the report said, no archives.
 */
async function levelAdmittedWhileS3Down(
  submittedBy: string,
  specs: { path: string; make: (url: string, prefix: string) => Promise<PageReport> }[],
): Promise<Level> {
  const host = `r${randomBytes(3).toString('hex')}.test`;
  const urls = specs.map((s) => `http://${host}${s.path}`);
  const { id: crawlId } = await insertCrawl(h.tdb.db, {
    orgId: ORG,
    submittedBy,
    seeds: urls,
    rules: [{ follow: 'same-origin' }],
    maxDepth: 0,
    maxPages: 30,
    perHostDelayMs: 0,
    hostParallelism: 4,
    formats: ['wacz'],
    signing: false,
    seedLevel: { take: urls, cut: [] },
  });
  const prefix = `test-reconcile/${crawlId}/0`;
  const pages: Level['pages'] = {};
  for (let i = 0; i < specs.length; i++) pages[specs[i]!.path] = await specs[i]!.make(urls[i]!, prefix);
  await upsertLevelReport(h.tdb.db, crawlId, 0, { depth: 0, pages: Object.values(pages) }, 'capture-flow');
  const admitted = await admitLevel({ db: h.tdb.db, s3: deadS3, bucket: h.bucket }, { crawlId, depth: 0, expand: false });
  expect(admitted.archivesCreated).toBe(0);
  await finishCrawlRow(h.tdb.db, crawlId, { state: 'succeeded', stopReason: 'max_depth' });
  return { crawlId, pages };
}

const pageState = async (crawlId: string) =>
  Object.fromEntries(
    (await h.tdb.db.selectFrom('crawl_pages').select(['url', 'state']).where('crawl_id', '=', crawlId).execute()).map((p) => [
      new URL(p.url).pathname,
      p.state,
    ]),
  );

describe('reconcile', () => {
  it('registers exactly the pending captures, from exactly their keys, as admission would', async () => {
    const level = await levelAdmittedWhileS3Down('alice', [
      { path: '/ok', make: (url, prefix) => writeCapture(h.s3, h.bucket, prefix, { url, finalUrl: `${url}?final` }) },
      { path: '/lying', make: (url, prefix) => writeCapture(h.s3, h.bucket, prefix, { url, reported: 'failed' }) },
      { path: '/cancelled', make: (url, prefix) => writeCapture(h.s3, h.bucket, prefix, { url, outcome: 'cancelled', reported: 'captured' }) },
      { path: '/failed', make: (url, prefix) => writeCapture(h.s3, h.bucket, prefix, { url, outcome: 'failed' }) },
      { path: '/missing', make: (url, prefix) => writeCapture(h.s3, h.bucket, prefix, { url, noManifest: true }) },
      { path: '/lost', make: async (url) => ({ url, status: 'failed', taskId: `lost-${randomBytes(4).toString('hex')}`, manifestError: 'upload timed out' }) },
      { path: '/robots', make: async (url) => ({ url, status: 'skipped', skipReason: 'robots' }) },
    ]);
    const { crawlId, pages } = level;
    // an orphan manifest next to them, reported by nobody: reconcile must never find it
    const orphanKey = `test-reconcile/${crawlId}/0/orphan.result.json`;
    await putJson(h.s3, h.bucket, orphanKey, {
      taskId: 'orphan',
      url: 'http://orphan.test/',
      status: 'succeeded',
      artifacts: [{ format: 'wacz', bucket: h.bucket, key: 'orphan.wacz', sha256: 'a', size: 1 }],
    });

    expect(await h.tdb.db.selectFrom('archives').select('id').execute()).toEqual([]);
    expect(await pageState(crawlId)).toEqual({
      '/ok': 'captured',
      '/lying': 'failed',
      '/cancelled': 'captured',
      '/failed': 'failed',
      '/missing': 'captured',
      '/lost': 'failed',
      '/robots': 'skipped',
    });
    const outboxBefore = await h.tdb.db.selectFrom('fga_outbox').select(['tuple_user', 'relation', 'object']).execute();

    const client = createS3(h.config.s3);
    const commands = recordCommands(client);
    try {
      const result = await reconcile({ db: h.tdb.db, s3: client, bucket: h.bucket });
      expect(result).toEqual({
        pending: 5,
        registered: 2,
        skipped: 2,
        missing: 1,
        unreadable: 0,
        skippedBy: { cancelled: 1, failed: 1 },
        pagesCorrected: 2,
      });
      // one GetObject per pending key and nothing else: no listing, no key of its own making
      const pendingKeys = ['/ok', '/lying', '/cancelled', '/failed', '/missing'].map((p) => pages[p]!.manifestKey).sort();
      expect(commands.map((c) => c.command).every((c) => c === 'GetObjectCommand')).toBe(true);
      expect(commands.map((c) => c.key).sort()).toEqual(pendingKeys);
      expect(commands.every((c) => c.bucket === h.bucket)).toBe(true);
    } finally {
      client.destroy();
    }

    const archives = await h.tdb.db.selectFrom('archives').selectAll().orderBy('url').execute();
    expect(archives.map((a) => a.task_id).sort()).toEqual([pages['/ok']!.taskId, pages['/lying']!.taskId].sort());
    const ok = archives.find((a) => a.task_id === pages['/ok']!.taskId)!;
    expect(ok).toMatchObject({
      bucket: h.bucket,
      object_key: pages['/ok']!.manifestKey!.replace(/\.result\.json$/, '.wacz'),
      url: pages['/ok']!.url,
      final_url: `${pages['/ok']!.url}?final`,
      size: 1234,
    });
    expect(ok.provenance).toMatchObject({ manifestKey: pages['/ok']!.manifestKey, software: 'test-capturer', formats: ['wacz'] });
    expect(ok.captured_at.toISOString()).toBe(pages['/ok']!.finishedAt);

    // the manifest wins: the lying page is captured now, the cancelled one failed; no orphan
    expect(await pageState(crawlId)).toEqual({
      '/ok': 'captured',
      '/lying': 'captured',
      '/cancelled': 'failed',
      '/failed': 'failed',
      '/missing': 'captured',
      '/lost': 'failed',
      '/robots': 'skipped',
    });
    expect(await h.tdb.db.selectFrom('archives').select('id').where('task_id', '=', 'orphan').execute()).toEqual([]);

    // each archive's tuple was queued with it, and nothing else was
    const outboxAfter = await h.tdb.db.selectFrom('fga_outbox').select(['tuple_user', 'relation', 'object']).execute();
    const added = outboxAfter.filter((r) => !outboxBefore.some((b) => b.object === r.object && b.relation === r.relation && b.tuple_user === r.tuple_user));
    expect(added.sort((a, b) => a.object.localeCompare(b.object))).toEqual(
      archives
        .map((a) => ({ tuple_user: `capture_job:${crawlId}`, relation: 'parent', object: `archive:${a.id}` }))
        .sort((a, b) => a.object.localeCompare(b.object)),
    );

    // delivered, they make the archives viewable to the submitter and the organization only
    await drain(h.tdb.db, h.store.client);
    for (const a of archives) {
      expect(await canView(h.store.client, { subject: 'alice', organizations: [] }, a.id)).toBe(true);
      expect(await canView(h.store.client, { subject: 'bob', organizations: [ORG] }, a.id)).toBe(true);
      expect(await canView(h.store.client, { subject: 'mallory', organizations: ['other'] }, a.id)).toBe(false);
      const tuples = await h.store.client.read({ object: `archive:${a.id}` });
      expect(tuples.tuples.map((t) => `${t.key.user} ${t.key.relation}`)).toEqual([`capture_job:${crawlId} parent`]);
    }

    // a second run changes nothing: what is left pending stays skipped or missing
    const again = await reconcile({ db: h.tdb.db, s3: h.s3, bucket: h.bucket });
    expect(again).toEqual({ pending: 3, registered: 0, skipped: 2, missing: 1, unreadable: 0, skippedBy: { cancelled: 1, failed: 1 }, pagesCorrected: 0 });
    expect(await h.tdb.db.selectFrom('archives').select('id').execute()).toHaveLength(2);
    expect(await h.tdb.db.selectFrom('fga_outbox').select('id').execute()).toEqual([]);

    // and once the late manifest lands at its key, the next run registers it
    await writeCaptureAt(pages['/missing']!);
    const late = await reconcile({ db: h.tdb.db, s3: h.s3, bucket: h.bucket });
    expect(late).toMatchObject({ pending: 3, registered: 1, skipped: 2, missing: 0 });
    expect(await h.tdb.db.selectFrom('archives').select('id').where('task_id', '=', pages['/missing']!.taskId!).execute()).toHaveLength(1);
  });

  it('with S3 still down nothing is registered and everything stays pending', async () => {
    const { crawlId, pages } = await levelAdmittedWhileS3Down('alice', [{ path: '/a', make: (url, prefix) => writeCapture(h.s3, h.bucket, prefix, { url }) }]);
    const down = await reconcile({ db: h.tdb.db, s3: deadS3, bucket: h.bucket });
    expect(down.unreadable).toBeGreaterThanOrEqual(1);
    expect(down.registered).toBe(0);
    expect(await h.tdb.db.selectFrom('archives').select('id').where('task_id', '=', pages['/a']!.taskId!).execute()).toEqual([]);
    const up = await reconcile({ db: h.tdb.db, s3: h.s3, bucket: h.bucket });
    expect(up.registered).toBe(1);
    expect(up.unreadable).toBe(0);
    expect(await pageState(crawlId)).toEqual({ '/a': 'captured' });
  });

  it('reads the manifest version the report named: a manifest put over the key since is not what it registers', async () => {
    const atItsVersion = async (report: PageReport & { manifestKey: string }): Promise<PageReport> => {
      const { VersionId } = await h.s3.send(new HeadObjectCommand({ Bucket: h.bucket, Key: report.manifestKey }));
      expect(VersionId).toMatch(/^(?!null$)./);
      return { ...report, manifestVersionId: VersionId! };
    };
    const { pages } = await levelAdmittedWhileS3Down('alice', [
      { path: '/versioned', make: async (url, prefix) => atItsVersion(await writeCapture(h.s3, h.bucket, prefix, { url })) },
      { path: '/unversioned', make: (url, prefix) => writeCapture(h.s3, h.bucket, prefix, { url }) },
    ]);
    const [versioned, unversioned] = [pages['/versioned']!, pages['/unversioned']!];
    const kept = await h.tdb.db
      .selectFrom('capture_submissions')
      .select(['task_id', 'manifest_version'])
      .where('task_id', 'in', [versioned.taskId!, unversioned.taskId!])
      .execute();
    expect(Object.fromEntries(kept.map((r) => [r.task_id, r.manifest_version]))).toEqual({
      [versioned.taskId!]: versioned.manifestVersionId,
      [unversioned.taskId!]: null,
    });
    // what a capture worker a hostile page took over puts over both keys: its manifest names another WACZ
    const forgedKey = (p: PageReport) => p.manifestKey!.replace(/\.result\.json$/, '.forged.wacz');
    for (const p of [versioned, unversioned]) {
      const read = await readManifest(h.s3, h.bucket, p.manifestKey!);
      if (read.kind !== 'ok') throw new Error(`the capture's manifest did not read: ${read.kind}`);
      const artifacts = read.manifest.artifacts.map((a) => (a.format === 'wacz' ? { ...a, key: forgedKey(p) } : a));
      await putJson(h.s3, h.bucket, p.manifestKey!, { ...read.manifest, artifacts });
    }
    expect(await reconcile({ db: h.tdb.db, s3: h.s3, bucket: h.bucket })).toMatchObject({ pending: 2, registered: 2 });
    const archives = await h.tdb.db
      .selectFrom('archives')
      .select(['task_id', 'object_key'])
      .where('task_id', 'in', [versioned.taskId!, unversioned.taskId!])
      .execute();
    expect(Object.fromEntries(archives.map((a) => [a.task_id, a.object_key]))).toEqual({
      // the version reported: the captured WACZ
      [versioned.taskId!]: versioned.manifestKey!.replace(/\.result\.json$/, '.wacz'),
      // no version reported: the key as it is now, the forgery (why the flow reports versions)
      [unversioned.taskId!]: forgedKey(unversioned),
    });
  });

  it('an archive its owner deleted stays deleted: reconcile does not register its capture again', async () => {
    const { pages } = await levelAdmittedWhileS3Down('alice', [
      { path: '/kept', make: (url, prefix) => writeCapture(h.s3, h.bucket, prefix, { url }) },
      { path: '/deleted', make: (url, prefix) => writeCapture(h.s3, h.bucket, prefix, { url }) },
    ]);
    expect(await reconcile({ db: h.tdb.db, s3: h.s3, bucket: h.bucket })).toMatchObject({ pending: 2, registered: 2 });
    const idOf = async (p: string) => (await h.tdb.db.selectFrom('archives').select('id').where('task_id', '=', pages[p]!.taskId!).executeTakeFirst())?.id;
    const deleted = (await idOf('/deleted'))!;
    expect(await deleteArchive({ db: h.tdb.db, s3: h.s3 }, deleted, 'alice')).toEqual({ kind: 'deleted', objectDeleted: true });
    // its submission still carries the manifest key, and no archive: exactly what reconcile reads
    expect(await h.tdb.db.selectFrom('capture_submissions').select('manifest_key').where('task_id', '=', pages['/deleted']!.taskId!).execute()).toEqual([
      { manifest_key: pages['/deleted']!.manifestKey },
    ]);
    const again = await reconcile({ db: h.tdb.db, s3: h.s3, bucket: h.bucket });
    expect(again).toMatchObject({ pending: 0, registered: 0, missing: 0 });
    expect(await idOf('/deleted')).toBeUndefined();
    expect(await idOf('/kept')).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('a deletion the bucket could not follow stands, says what it left, and stays deleted', async () => {
    const { pages } = await levelAdmittedWhileS3Down('alice', [{ path: '/a', make: (url, prefix) => writeCapture(h.s3, h.bucket, prefix, { url }) }]);
    expect(await reconcile({ db: h.tdb.db, s3: h.s3, bucket: h.bucket })).toMatchObject({ registered: 1 });
    const taskId = pages['/a']!.taskId!;
    const { id } = await h.tdb.db.selectFrom('archives').select('id').where('task_id', '=', taskId).executeTakeFirstOrThrow();
    const logged: string[] = [];
    expect(await deleteArchive({ db: h.tdb.db, s3: deadS3, log: (m) => logged.push(m) }, id, 'alice')).toEqual({ kind: 'deleted', objectDeleted: false });
    expect(await h.tdb.db.selectFrom('archives').select('id').where('id', '=', id).execute()).toEqual([]);
    const [row] = await h.tdb.db.selectFrom('archive_deletions').select(['archive_id', 'deleted_by', 'cleanup_error']).where('task_id', '=', taskId).execute();
    expect(row).toMatchObject({ archive_id: id, deleted_by: 'alice', cleanup_error: expect.stringMatching(/^objects: /) });
    expect(logged).toEqual([expect.stringContaining(`archive ${id} deleted from the ledger; left behind: objects: `)]);
    // the manifest is still in the bucket, and still the archive is not registered again
    expect((await readManifest(h.s3, h.bucket, pages['/a']!.manifestKey!)).kind).toBe('ok');
    expect(await reconcile({ db: h.tdb.db, s3: h.s3, bucket: h.bucket })).toMatchObject({ pending: 0, registered: 0 });
  });

  it('--since-days: only captures reported in the last n days', async () => {
    const { pages } = await levelAdmittedWhileS3Down('alice', [
      { path: '/recent', make: (url, prefix) => writeCapture(h.s3, h.bucket, prefix, { url }) },
      { path: '/old', make: (url, prefix) => writeCapture(h.s3, h.bucket, prefix, { url }) },
    ]);
    await h.tdb.db
      .updateTable('capture_submissions')
      .set({ reported_at: new Date(Date.now() - 40 * 24 * 3600 * 1000) })
      .where('task_id', '=', pages['/old']!.taskId!)
      .execute();
    const recent = await reconcile({ db: h.tdb.db, s3: h.s3, bucket: h.bucket }, { sinceDays: 30 });
    expect(recent).toMatchObject({ registered: 1 });
    const has = async (p: string) => (await h.tdb.db.selectFrom('archives').select('id').where('task_id', '=', pages[p]!.taskId!).execute()).length;
    expect([await has('/recent'), await has('/old')]).toEqual([1, 0]);
    const all = await reconcile({ db: h.tdb.db, s3: h.s3, bucket: h.bucket });
    expect(all).toMatchObject({ registered: 1 });
    expect(await has('/old')).toBe(1);
  });

  it('pages through many pending captures in batches, each registered once', async () => {
    const specs = Array.from({ length: 23 }, (_, i) => ({
      path: `/p${i}`,
      make: (url: string, prefix: string) =>
        writeCapture(h.s3, h.bucket, prefix, { url, outcome: i % 5 === 4 ? ('cancelled' as const) : ('succeeded' as const) }),
    }));
    const { crawlId, pages } = await levelAdmittedWhileS3Down('carol', specs);
    const before = await h.tdb.db.selectFrom('archives').select('id').execute();
    // two runs at once, small batches: the unique task id keeps every capture registered once
    const [a, b] = await Promise.all([
      reconcile({ db: h.tdb.db, s3: h.s3, bucket: h.bucket }, { batchSize: 4 }),
      reconcile({ db: h.tdb.db, s3: h.s3, bucket: h.bucket }, { batchSize: 7 }),
    ]);
    const after = await h.tdb.db.selectFrom('archives').select(['id', 'task_id']).execute();
    expect(after.length - before.length).toBe(19);
    const mine = after.filter((r) => Object.values(pages).some((p) => p.taskId === r.task_id));
    expect(mine).toHaveLength(19);
    // both runs saw every cancelled capture (this crawl's 4, and any the tests above left pending)
    expect(a.skippedBy.cancelled).toBe(b.skippedBy.cancelled);
    expect(a.skippedBy.cancelled).toBeGreaterThanOrEqual(4);
    const states = await pageState(crawlId);
    expect(
      Object.entries(states)
        .filter(([, st]) => st === 'failed')
        .map(([p]) => p)
        .sort(),
    ).toEqual(['/p14', '/p19', '/p4', '/p9']);
    expect(Object.values(states).filter((st) => st === 'captured')).toHaveLength(19);
    // one tuple per archive, however the two runs interleaved
    const queued = await h.tdb.db.selectFrom('fga_outbox').select('object').where('tuple_user', '=', `capture_job:${crawlId}`).execute();
    expect(queued.map((q) => q.object).sort()).toEqual(mine.map((m) => `archive:${m.id}`).sort());
    await drain(h.tdb.db, h.store.client);
  });

  it('runs as the reconcile workflow on a worker, delivering the tuples it queued', async () => {
    const { pages } = await levelAdmittedWhileS3Down('dave', [
      { path: '/w1', make: (url, prefix) => writeCapture(h.s3, h.bucket, prefix, { url }) },
      { path: '/w2', make: (url, prefix) => writeCapture(h.s3, h.bucket, prefix, { url, outcome: 'cancelled' }) },
    ]);
    await drain(h.tdb.db, h.store.client);
    const result = await h.tw.client.workflow.execute<typeof reconcileWorkflow>(RECONCILE_WORKFLOW, {
      taskQueue,
      workflowId: `reconcile-test-${randomBytes(4).toString('hex')}`,
      args: [{ sinceDays: 1 }],
    });
    expect(result).toMatchObject({ registered: 1, missing: 0, unreadable: 0, tuplesDelivered: 1 });
    expect(result.skippedBy.cancelled).toBeGreaterThanOrEqual(1);
    const archive = await h.tdb.db.selectFrom('archives').select('id').where('task_id', '=', pages['/w1']!.taskId!).executeTakeFirstOrThrow();
    expect(await canView(h.store.client, { subject: 'dave', organizations: [] }, archive.id)).toBe(true);
    expect(await h.tdb.db.selectFrom('fga_outbox').select('id').execute()).toEqual([]);
  });

  it('the reconcile schedule: created idempotently, triggered by hand with the temporal CLI', async () => {
    // the worker's own schedule options, under an id of this test's so the real one is untouched
    const id = `reconcile-test-${randomBytes(4).toString('hex')}`;
    const options = { ...reconcileSchedule(taskQueue), scheduleId: id };
    expect(options.spec).toEqual({ cronExpressions: ['17 3 * * *'] });
    expect(options.action).toMatchObject({ workflowType: 'reconcile', taskQueue, args: [{ sinceDays: RECONCILE_SINCE_DAYS }] });
    try {
      expect(await ensureSchedules(h.tw.client, [options])).toEqual([{ id, action: 'created' }]);
      expect(await ensureSchedules(h.tw.client, [options])).toEqual([{ id, action: 'updated' }]);
      const desc = await h.tw.client.schedule.getHandle(id).describe();
      expect(desc.action).toMatchObject({ type: 'startWorkflow', workflowType: 'reconcile', taskQueue });
      // the server keeps the cron as a calendar: 03:17 every day
      expect(desc.spec.calendars).toHaveLength(1);
      expect(desc.spec.calendars![0]).toMatchObject({ minute: [{ start: 17, end: 17 }], hour: [{ start: 3, end: 3 }], dayOfMonth: [{ start: 1, end: 31 }] });

      const { pages } = await levelAdmittedWhileS3Down('erin', [{ path: '/s', make: (url, prefix) => writeCapture(h.s3, h.bucket, prefix, { url }) }]);
      await run(`${ROOT}.tools/bin/temporal`, [
        'schedule',
        'trigger',
        '--schedule-id',
        id,
        '--address',
        h.config.temporal.address,
        '--namespace',
        h.config.temporal.namespace,
      ]);
      await eventually(
        async () =>
          (await h.tdb.db.selectFrom('archives').select('id').where('task_id', '=', pages['/s']!.taskId!).execute()).length === 1 ? true : undefined,
        30_000,
        'the triggered reconcile',
      );
      const recent = await eventually(async () => {
        const d = await h.tw.client.schedule.getHandle(id).describe();
        return d.info.recentActions.length > 0 ? d.info.recentActions : undefined;
      });
      expect(recent).toHaveLength(1);
    } finally {
      await h.tw.client.schedule
        .getHandle(id)
        .delete()
        .catch(() => undefined);
    }
  }, 60_000);

  it('npm run fga:reconcile -- --since-days 30 prints pending, registered, skipped, missing', async () => {
    const { pages } = await levelAdmittedWhileS3Down('frank', [
      { path: '/c1', make: (url, prefix) => writeCapture(h.s3, h.bucket, prefix, { url }) },
      { path: '/c2', make: (url, prefix) => writeCapture(h.s3, h.bucket, prefix, { url, noManifest: true }) },
    ]);
    const env = {
      ...process.env,
      CAPTURE_LEDGER_DATABASE_URL: h.tdb.url,
      CAPTURE_LEDGER_FGA_STORE_ID: h.store.storeId,
      CAPTURE_LEDGER_FGA_MODEL_ID: h.store.modelId,
    };
    // everything still pending from the tests above is counted too; take the baseline first
    const baseline = await reconcile({ db: h.tdb.db, s3: deadS3, bucket: h.bucket }, { sinceDays: 30 });
    const { stdout } = await run('npm', ['run', '--silent', 'fga:reconcile', '--', '--since-days', '30'], { cwd: ROOT, env });
    const lines = stdout.trim().split('\n');
    expect(lines[0]).toBe(`pending ${baseline.pending}`);
    expect(lines[1]).toBe('registered 1');
    expect(lines[2]).toMatch(/^skipped \d+/);
    expect(lines[3]).toBe(`missing ${baseline.pending - 1 - Number(lines[2]!.split(' ')[1])}`);
    expect(await h.tdb.db.selectFrom('archives').select('id').where('task_id', '=', pages['/c1']!.taskId!).execute()).toHaveLength(1);

    const bad = await run('npm', ['run', '--silent', 'fga:reconcile', '--', '--since-days', 'soon'], { cwd: ROOT, env }).catch(
      (e: { code: number; stderr: string }) => e,
    );
    expect(bad).toMatchObject({ code: 2 });
    expect((bad as { stderr: string }).stderr).toContain('--since-days must be a number of days ≥ 0, got "soon"');
  }, 60_000);
});

/** Writes the manifest a capture's report pointed at, after the fact (a late upload). */
async function writeCaptureAt(page: PageReport & { taskId?: string; manifestKey?: string }): Promise<void> {
  const key = page.manifestKey!;
  await putJson(h.s3, h.bucket, key, {
    taskId: page.taskId,
    url: page.url,
    status: 'succeeded',
    artifacts: [{ format: 'wacz', bucket: h.bucket, key: key.replace(/\.result\.json$/, '.wacz'), sha256: 'f'.repeat(64), size: 1 }],
    finishedAt: new Date().toISOString(),
  });
}
