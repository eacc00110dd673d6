// Faults over the real stack, each ending with nothing lost. The whole path runs for real: the
// API (in this process, restartable on its port), a Temporal worker, the reference capture flow
// capturing a test site into SeaweedFS, OpenFGA.
//
// The shared services are never stopped — other test files use them right now. The worker
// reaches S3 through a private `weed s3` gateway on the shared filer, and OpenFGA through a
// private `openfga run` on the shared datastore; a fault test kills that private process and
// starts it again on the same port. The API keeps using the shared instances.
//
// The worker killed in the middle of a crawl is test/integration/crawl-workflow.test.ts
// ("survives the worker being killed mid-crawl").
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import { crawlWorkflowId, OUTBOX_DRAIN_WORKFLOW, RECONCILE_WORKFLOW } from '../../temporal.config.ts';
import type { LevelReportBody } from '../../src/domain/contract.ts';
import { drainOutbox } from '../../src/fga/outbox.ts';
import { outboxDrained } from '../support/outbox.ts';
import { admitLevel } from '../../src/ledger/admit-level.ts';
import type { outboxDrain as outboxDrainWorkflow } from '../../src/workflows/outbox-drain.ts';
import type { reconcile as reconcileWorkflow } from '../../src/workflows/reconcile.ts';
import { devHeaders } from '../support/api.ts';
import { capabilityHeader, eventually, waitForCrawlEnd } from '../support/crawls.ts';
import { ROOT } from '../support/env.ts';
import { useHarness } from '../support/harness.ts';
import { insertJob, insertManyArchives } from '../support/ledger.ts';
import { cancelSignal, progressQuery } from '../../src/workflows/messages.ts';

const ORG = 'acme';
const FLOW = 'capture-flow';

// the worker goes through the gateways (h.gateways.s3, h.gateways.fga) the tests stop and start;
// the API and the flow keep using the shared instances. Between two tests the harness starts a
// stopped gateway again and ends a crawl still running.
const h = useHarness({
  crawls: 'flow',
  gateways: { s3: true, fga: true },
  site: {
    hosts: {
      a: {
        pages: {
          '/': '<title>Home</title><p>home</p><a href="/deep1">1</a> <a href="/deep2">2</a>',
          '/deep1': '<title>Deep 1</title><p>one</p>',
          '/deep2': '<title>Deep 2</title><p>two</p>',
          '/one': '<title>One</title><p>one</p>',
          '/two': '<title>Two</title><p>two</p>',
          '/three': '<title>Three</title><p>three</p>',
        },
      },
    },
    firstAddress: 40,
  },
  // a report that finds the API down is retried for ~30 s
  flow: { reportRetry: { attempts: 12, baseDelayMs: 250 } },
  env: { CAPTURE_LEDGER_LEVEL_TIMEOUT_SECONDS: '90', CAPTURE_LEDGER_OPENSEARCH_URL: '' },
  grants: [['alice', 'submitter', ORG]],
});

// a test that drives every drain itself turns the worker's outbox wake off: the next one has it back
afterEach(async () => {
  await h.tw.setOutboxWake(true);
});

async function startCrawl(body: Record<string, unknown>): Promise<string> {
  const res = await fetch(`${h.api.url}/api/crawls`, {
    method: 'POST',
    headers: { ...devHeaders('alice', [ORG]), 'content-type': 'application/json' },
    body: JSON.stringify({ perHostDelayMs: 0, ...body }),
  });
  expect(res.status, await res.clone().text()).toBe(202);
  return ((await res.json()) as { crawlId: string }).crawlId;
}

async function crawlDetail(crawlId: string): Promise<Record<string, unknown>> {
  const res = await fetch(`${h.api.url}/api/crawls/${crawlId}`, { headers: devHeaders('alice', [ORG]) });
  expect(res.status).toBe(200);
  return (await res.json()) as Record<string, unknown>;
}

async function archivesSeenBy(subject: string, orgs: string[]): Promise<{ id: string; taskId: string; url: string }[]> {
  const res = await fetch(`${h.api.url}/api/archives?limit=200`, { headers: devHeaders(subject, orgs) });
  expect(res.status).toBe(200);
  return (await res.json()) as { id: string; taskId: string; url: string }[];
}

/** Every tuple OpenFGA holds for these objects, read back from the shared server. */
async function tuplesOf(objects: string[]): Promise<string[]> {
  const out: string[] = [];
  for (const object of objects) {
    let token: string | undefined;
    do {
      const r = await h.store.client.read({ object }, { pageSize: 100, ...(token ? { continuationToken: token } : {}) });
      out.push(...r.tuples.map((t) => `${t.key.user} ${t.key.relation} ${t.key.object}`));
      token = r.continuation_token || undefined;
    } while (token);
  }
  return out.sort();
}

/** Every `parent` tuple from one capture_job to archives, paged. */
async function archiveParentTuples(crawlId: string): Promise<string[]> {
  const out: string[] = [];
  let token: string | undefined;
  do {
    const r = await h.store.client.read(
      { user: `capture_job:${crawlId}`, relation: 'parent', object: 'archive:' },
      { pageSize: 100, ...(token ? { continuationToken: token } : {}) },
    );
    out.push(...r.tuples.map((t) => t.key.object));
    token = r.continuation_token || undefined;
  } while (token);
  return out.sort();
}

/** The real `temporal` CLI, as an operator runs it (docs/operations.md). */
async function temporalCli(args: string[]): Promise<string> {
  const { stdout } = await promisify(execFile)(
    `${ROOT}.tools/bin/temporal`,
    [...args, '--address', h.config.temporal.address, '--namespace', h.config.temporal.namespace],
    { timeout: 30_000 },
  );
  return stdout;
}

const levelTaskIds = (report: LevelReportBody | undefined): string[] => (report?.pages ?? []).flatMap((p) => (p.taskId ? [p.taskId] : [])).sort();

describe('faults: nothing is lost', () => {
  it('S3 unavailable while a level is admitted: the pages stay out of the ledger, and reconcile registers them once S3 is back', async () => {
    await h.gateways.s3.stop();
    const seeds = ['/one', '/two', '/three'].map((p) => h.site.url('a', p));
    const crawlId = await startCrawl({ seeds, maxDepth: 0 });
    const level = await h.flow.waitForLevel(crawlId, 0, 60_000);
    expect(level.state).toBe('reported');
    const row = await waitForCrawlEnd(h.tdb.db, crawlId, 60_000);
    expect(row).toMatchObject({ state: 'succeeded', stop_reason: 'max_depth' });

    // not in the ledger, but attributed: each task with its organization and manifest key
    const tasks = levelTaskIds(level.report);
    expect(tasks).toHaveLength(3);
    expect(await h.tdb.db.selectFrom('archives').select('id').where('task_id', 'in', tasks).execute()).toEqual([]);
    const subs = await h.tdb.db.selectFrom('capture_submissions').selectAll().where('task_id', 'in', tasks).execute();
    expect(subs).toHaveLength(3);
    for (const s of subs)
      expect(s).toMatchObject({
        org_id: ORG,
        submitted_by: 'alice',
        crawl_id: crawlId,
        manifest_error: null,
        manifest_key: expect.stringMatching(/\.result\.json$/),
      });
    expect((await archivesSeenBy('alice', [ORG])).filter((a) => tasks.includes(a.taskId))).toEqual([]);
    expect(await crawlDetail(crawlId)).toMatchObject({ pagesCaptured: 3, waczCount: 0 });

    // reconcile while S3 is still down registers nothing and loses nothing
    const down = await h.tw.client.workflow.execute<typeof reconcileWorkflow>(RECONCILE_WORKFLOW, {
      taskQueue: h.config.temporal.taskQueue,
      workflowId: `reconcile-${randomUUID()}`,
      args: [{}],
    });
    expect(down).toMatchObject({ pending: 3, registered: 0, unreadable: 3, tuplesDelivered: null });

    await h.gateways.s3.start();
    const up = await h.tw.client.workflow.execute<typeof reconcileWorkflow>(RECONCILE_WORKFLOW, {
      taskQueue: h.config.temporal.taskQueue,
      workflowId: `reconcile-${randomUUID()}`,
      args: [{ sinceDays: 1 }],
    });
    expect(up).toMatchObject({ pending: 3, registered: 3, skipped: 0, missing: 0, unreadable: 0 });
    // the worker's outbox wake and the workflow's own delivery share them: 3 in all, whoever took them
    expect(up.tuplesDelivered).toBeLessThanOrEqual(3);
    await outboxDrained(h.tdb.db);

    // in the ledger now, viewable by the submitter and the organization, and the bytes are there
    const seen = (await archivesSeenBy('alice', [])).filter((a) => tasks.includes(a.taskId));
    expect(seen.map((a) => a.url).sort()).toEqual([...seeds].sort());
    expect((await archivesSeenBy('bob', [ORG])).filter((a) => tasks.includes(a.taskId))).toHaveLength(3);
    expect((await archivesSeenBy('mallory', ['other'])).filter((a) => tasks.includes(a.taskId))).toEqual([]);
    for (const a of seen) {
      const signed = await fetch(`${h.api.url}/api/archives/${a.id}/url`, { method: 'POST', headers: devHeaders('alice', []) });
      expect(signed.status).toBe(200);
      const { url } = (await signed.json()) as { url: string };
      const wacz = Buffer.from(await (await fetch(url)).arrayBuffer());
      expect(wacz.subarray(0, 2).toString('latin1')).toBe('PK');
    }
    expect(await crawlDetail(crawlId)).toMatchObject({ pagesCaptured: 3, waczCount: 3 });
    expect(await h.tdb.db.selectFrom('fga_outbox').select('id').execute()).toEqual([]);
  }, 150_000);

  it('OpenFGA down while tuples are drained: they stay queued, and arrive exactly once when it is back', async () => {
    await h.gateways.fga.stop();
    // a real crawl while OpenFGA is down: its job and archive tuples cannot be delivered
    const crawlId = await startCrawl({ seeds: [h.site.url('a', '/one'), h.site.url('a', '/two')], maxDepth: 0 });
    const level = await h.flow.waitForLevel(crawlId, 0, 60_000);
    expect(await waitForCrawlEnd(h.tdb.db, crawlId, 90_000)).toMatchObject({ state: 'succeeded', stop_reason: 'max_depth' });
    const archives = await h.tdb.db.selectFrom('archives').select('id').where('task_id', 'in', levelTaskIds(level.report)).execute();
    expect(archives).toHaveLength(2);
    // and a bulk job whose 150 archive tuples take two batches
    const bulkJob = await insertJob(h.tdb.db, { orgId: ORG, submittedBy: 'alice' });
    const bulk = await insertManyArchives(h.tdb.db, bulkJob, h.bucket, 150);

    const expected = [
      `organization:${ORG} parent capture_job:${crawlId}`,
      `user:alice owner capture_job:${crawlId}`,
      ...archives.map((a) => `capture_job:${crawlId} parent archive:${a.id}`),
      `organization:${ORG} parent capture_job:${bulkJob}`,
      `user:alice owner capture_job:${bulkJob}`,
      ...bulk.map((id) => `capture_job:${bulkJob} parent archive:${id}`),
    ].sort();
    const queued = async () =>
      (await h.tdb.db.selectFrom('fga_outbox').select(['tuple_user', 'relation', 'object', 'attempts', 'last_error']).execute()).map((r) => ({
        ...r,
        key: `${r.tuple_user} ${r.relation} ${r.object}`,
      }));
    // the worker's outbox wake tried to deliver the crawl's tuples and failed: they carry attempts and the error
    const tried = (rows: Awaited<ReturnType<typeof queued>>) =>
      rows.filter((r) => r.key.includes(crawlId)).every((r) => r.attempts >= 1 && (r.last_error ?? '') !== '');
    await eventually(async () => (tried(await queued()) ? true : undefined), 60_000, 'a failed delivery of the crawl’s tuples');
    // from here on the test drives every drain itself
    await h.tw.setOutboxWake(false);
    const q1 = await queued();
    expect([...new Set(q1.map((r) => r.key))].sort()).toEqual(expected);
    expect(q1.filter((r) => r.key.includes(crawlId)).length).toBe(4);

    // a drain now: OpenFGA unavailable, nothing leaves the outbox, attempts go up
    const before = new Map(q1.map((r) => [r.key, r.attempts]));
    const down = await drainOutbox(h.tdb.db, h.workerFga);
    expect(down.unavailable).toBeDefined();
    expect(down.delivered).toBe(0);
    const q2 = await queued();
    expect(q2.map((r) => r.key).sort()).toEqual(q1.map((r) => r.key).sort());
    expect(q2.filter((r) => r.attempts > before.get(r.key)!).length).toBeGreaterThan(0);
    expect(await tuplesOf([`capture_job:${crawlId}`, ...archives.map((a) => `archive:${a.id}`)])).toEqual([]);

    // the outbox-drain workflow starts while OpenFGA is still down; its retries deliver it all.
    // Its second attempt is usually scheduled ~2 s in; the bound is wide because a worker on a
    // loaded machine (once, right after the search bench) took longer than 30 s.
    const handle = await h.tw.client.workflow.start<typeof outboxDrainWorkflow>(OUTBOX_DRAIN_WORKFLOW, {
      taskQueue: h.config.temporal.taskQueue,
      workflowId: `outbox-drain-${randomUUID()}`,
      args: [],
    });
    await eventually(
      async () => {
        const d = await handle.describe();
        return (d.raw.pendingActivities ?? []).some((a) => (a.attempt ?? 0) >= 2) ? true : undefined;
      },
      60_000,
      'a failed delivery attempt',
    );
    await h.gateways.fga.start();
    const result = await handle.result();
    expect(result.failed).toBe(0);
    expect(result.remaining).toBe(0);
    // The attempt that met OpenFGA coming back may have delivered part (or all) of the queue in
    // some lanes while another lane still saw it down; that attempt fails and the next one
    // delivers the rest. So the last attempt's count is at most the queue; what must hold is that
    // the outbox is empty and every tuple is in OpenFGA exactly once.
    expect(result.delivered).toBeLessThanOrEqual(q1.length);
    expect(await h.tdb.db.selectFrom('fga_outbox').select('id').execute()).toEqual([]);

    // every expected tuple is in OpenFGA exactly once, and nothing else
    const got = [
      ...(await tuplesOf([`capture_job:${crawlId}`, `capture_job:${bulkJob}`, ...archives.map((a) => `archive:${a.id}`)])),
      ...(await archiveParentTuples(bulkJob)).map((o) => `capture_job:${bulkJob} parent ${o}`),
    ].sort();
    expect(got).toEqual(expected);
    expect(new Set(got).size).toBe(got.length);
    const seen = (await archivesSeenBy('alice', [])).map((a) => a.id);
    for (const a of archives) expect(seen).toContain(a.id);
  }, 150_000);

  it('the API restarted in the middle of a crawl: the report still reaches the workflow', async () => {
    h.flow.setKnobs({ captureDelayMs: 300 });
    try {
      const crawlId = await startCrawl({ seeds: [h.site.url('a', '/')], maxDepth: 1 });
      // the level is out at the flow: the API goes away before the flow reports it
      await eventually(async () => (h.flow.level(crawlId, 0) !== undefined ? true : undefined), 30_000, 'level 0 at the flow');
      // a new API process once the flow is reporting into nothing: same database, same Temporal, same port
      await h.restartApi(async () => {
        await eventually(async () => ((h.flow.level(crawlId, 0)?.state ?? '') === 'reporting' ? true : undefined), 30_000, 'the flow reporting');
        await new Promise((r) => setTimeout(r, 1000));
      });
      const level0 = await h.flow.waitForLevel(crawlId, 0, 60_000);
      expect(level0.state).toBe('reported');
      expect(level0.outcome!.attempts.length).toBeGreaterThan(1);
      expect(level0.outcome!.attempts[0]!.error).toBeDefined(); // refused: nobody listening
      expect(level0.outcome!.attempts.at(-1)!.status).toBe(202);

      const level1 = await h.flow.waitForLevel(crawlId, 1, 60_000);
      expect(level1.state).toBe('reported');
      const row = await waitForCrawlEnd(h.tdb.db, crawlId, 60_000);
      expect(row).toMatchObject({ state: 'succeeded', stop_reason: 'max_depth', depth_reached: 1 });
      expect(await crawlDetail(crawlId)).toMatchObject({ pagesDiscovered: 3, pagesCaptured: 3, waczCount: 3 });
      const tasks = [...levelTaskIds(level0.report), ...levelTaskIds(level1.report)];
      expect(await h.tdb.db.selectFrom('archives').select('id').where('task_id', 'in', tasks).execute()).toHaveLength(3);
    } finally {
      h.flow.setKnobs({});
    }
  }, 150_000);

  it('the same level reported twice: the same rows, archives, decisions and tuples as once', async () => {
    // level 1 is slow, so level 0 can be reported again while the crawl still runs
    h.flow.setKnobs({ slow: [{ pattern: '/deep', ms: 4000 }] });
    try {
      const crawlId = await startCrawl({ seeds: [h.site.url('a', '/')], maxDepth: 1 });
      const level0 = await h.flow.waitForLevel(crawlId, 0, 60_000);
      expect(level0.state).toBe('reported');
      const tasks0 = levelTaskIds(level0.report);
      expect(tasks0).toHaveLength(1);
      // admitted once, its tuples delivered, the next level out
      await eventually(async () => (h.flow.level(crawlId, 1) !== undefined ? true : undefined), 30_000, 'level 1 dispatched');
      const first = await h.tdb.db
        .selectFrom('crawl_level_reports')
        .selectAll()
        .where('crawl_id', '=', crawlId)
        .where('depth', '=', 0)
        .executeTakeFirstOrThrow();
      expect(first.admitted_at).not.toBeNull();

      const snapshot = async () => {
        const archives = await h.tdb.db.selectFrom('archives').selectAll().where('task_id', 'in', tasks0).orderBy('id').execute();
        return {
          pages0: await h.tdb.db.selectFrom('crawl_pages').selectAll().where('crawl_id', '=', crawlId).where('depth', '=', 0).orderBy('id').execute(),
          pages1: await h.tdb.db
            .selectFrom('crawl_pages')
            .select(['id', 'url', 'depth', 'host', 'action', 'discovered_at'])
            .where('crawl_id', '=', crawlId)
            .where('depth', '=', 1)
            .orderBy('id')
            .execute(),
          submissions: await h.tdb.db.selectFrom('capture_submissions').selectAll().where('task_id', 'in', tasks0).orderBy('task_id').execute(),
          archives,
          decisions: await h.tdb.db
            .selectFrom('crawl_decisions')
            .selectAll()
            .where('crawl_id', '=', crawlId)
            .where('depth', '=', 0)
            .orderBy('rule')
            .orderBy('hostname')
            .execute(),
          outbox: await h.tdb.db
            .selectFrom('fga_outbox')
            .select(['tuple_user', 'relation', 'object'])
            .where((eb) =>
              eb.or([
                eb('object', '=', `capture_job:${crawlId}`),
                ...(archives.length
                  ? [
                      eb(
                        'object',
                        'in',
                        archives.map((a) => `archive:${a.id}`),
                      ),
                    ]
                  : []),
              ]),
            )
            .execute(),
          tuples: await tuplesOf([`capture_job:${crawlId}`, ...archives.map((a) => `archive:${a.id}`)]),
        };
      };
      await outboxDrained(h.tdb.db);
      const once = await snapshot();
      expect(once.archives).toHaveLength(1);
      expect(once.pages1.map((p) => new URL(p.url).pathname)).toEqual(['/deep1', '/deep2']);
      expect(once.decisions.length).toBeGreaterThan(0);
      expect(once.outbox).toEqual([]);
      expect(once.tuples).toEqual(
        [
          `capture_job:${crawlId} parent archive:${once.archives[0]!.id}`,
          `organization:${ORG} parent capture_job:${crawlId}`,
          `user:alice owner capture_job:${crawlId}`,
        ].sort(),
      );

      // the flow's report of level 0, sent again
      const again = await fetch(level0.dispatch.reportUrl, {
        method: 'POST',
        headers: { ...devHeaders(FLOW, [ORG]), ...capabilityHeader(level0.dispatch), 'content-type': 'application/json' },
        body: JSON.stringify(level0.report),
      });
      expect(again.status).toBe(202);
      const { reportId } = (await again.json()) as { reportId: string };
      expect(reportId).not.toBe(first.report_id);
      await eventually(
        async () => {
          const r = await h.tdb.db
            .selectFrom('crawl_level_reports')
            .selectAll()
            .where('crawl_id', '=', crawlId)
            .where('depth', '=', 0)
            .executeTakeFirstOrThrow();
          return r.report_id === reportId && r.admitted_at !== null ? true : undefined;
        },
        30_000,
        'the second report admitted',
      );
      expect(await snapshot()).toEqual(once);

      // and admission retried as an activity would be (expanding again): still the same, nothing queued
      await admitLevel({ db: h.tdb.db, s3: h.workerS3, bucket: h.bucket }, { crawlId, depth: 0, expand: true });
      expect(await snapshot()).toEqual(once);

      const row = await waitForCrawlEnd(h.tdb.db, crawlId, 60_000);
      expect(row).toMatchObject({ state: 'succeeded', stop_reason: 'max_depth' });
      expect(await crawlDetail(crawlId)).toMatchObject({ pagesDiscovered: 3, pagesCaptured: 3, waczCount: 3 });
      const history = await h.tw.client.workflow.getHandle(crawlWorkflowId(crawlId)).fetchHistory();
      const admits = history.events!.filter((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'admitLevel');
      expect(admits).toHaveLength(3); // level 0, level 0 again, level 1
    } finally {
      h.flow.setKnobs({});
    }
  }, 150_000);

  it('20 concurrent POST /api/crawls: exactly one 202, the rest 409', async () => {
    const crawlsBefore = await h.tdb.db.selectFrom('crawls').select('id').execute();
    const responses = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        fetch(`${h.api.url}/api/crawls`, {
          method: 'POST',
          headers: { ...devHeaders('alice', [ORG]), 'content-type': 'application/json' },
          body: JSON.stringify({ seeds: [h.site.url('a', i % 2 === 0 ? '/one' : '/two')], maxDepth: 0, perHostDelayMs: 0 }),
        }).then(async (r) => ({ status: r.status, body: (await r.json()) as { crawlId?: string; error?: string } })),
      ),
    );
    const accepted = responses.filter((r) => r.status === 202);
    const refused = responses.filter((r) => r.status === 409);
    expect(accepted).toHaveLength(1);
    expect(refused).toHaveLength(19);
    for (const r of refused) expect(r.body.error).toBe('a crawl is already running');
    const crawlId = accepted[0]!.body.crawlId!;

    // exactly one new row, and it is the one whose workflow runs and finishes
    const crawlsAfter = await h.tdb.db.selectFrom('crawls').select('id').execute();
    expect(crawlsAfter.map((c) => c.id).filter((id) => !crawlsBefore.some((b) => b.id === id))).toEqual([crawlId]);
    const row = await waitForCrawlEnd(h.tdb.db, crawlId, 60_000);
    expect(row).toMatchObject({ state: 'succeeded', stop_reason: 'max_depth' });
    expect(await crawlDetail(crawlId)).toMatchObject({ pagesCaptured: 1, waczCount: 1 });
    // and the next crawl can start
    const next = await startCrawl({ seeds: [h.site.url('a', '/three')], maxDepth: 0 });
    expect(await waitForCrawlEnd(h.tdb.db, next, 60_000)).toMatchObject({ state: 'succeeded' });
  }, 150_000);

  it('the operator commands of docs/operations.md: find a running crawl, query its progress, cancel it', async () => {
    h.flow.setKnobs({ slow: [{ pattern: '/deep', ms: 6000 }] });
    try {
      const crawlId = await startCrawl({ seeds: [h.site.url('a', '/')], maxDepth: 1 });
      await eventually(async () => (h.flow.level(crawlId, 1) !== undefined ? true : undefined), 30_000, 'level 1 dispatched');

      // temporal workflow list --query 'CrawlOrg="acme" AND CrawlState="running"'
      const listed = await eventually(
        async () => {
          const out = await temporalCli(['workflow', 'list', '--query', `CrawlOrg="${ORG}" AND CrawlState="running"`, '--output', 'json']);
          const rows = JSON.parse(out || '[]') as { execution: { workflowId: string } }[];
          return rows.some((r) => r.execution.workflowId === crawlWorkflowId(crawlId)) ? rows : undefined;
        },
        20_000,
        'the crawl in the visibility query',
      );
      expect(listed.length).toBeGreaterThan(0);

      // temporal workflow query --workflow-id crawl-<id> --type progress
      const progress = JSON.parse(
        await temporalCli(['workflow', 'query', '--workflow-id', crawlWorkflowId(crawlId), '--type', progressQuery.name, '--output', 'json']),
      ) as { queryResult: unknown[] };
      expect(progress.queryResult[0]).toMatchObject({ crawlId, phase: 'waiting', depth: 1, maxDepth: 1, cancelRequested: false });

      // temporal workflow signal --workflow-id crawl-<id> --name cancel
      await temporalCli(['workflow', 'signal', '--workflow-id', crawlWorkflowId(crawlId), '--name', cancelSignal.name, '--input', '{"reason":"operator"}']);
      const row = await waitForCrawlEnd(h.tdb.db, crawlId, 30_000);
      expect(row).toMatchObject({ state: 'failed', stop_reason: 'failed', failure: 'cancelled: operator' });
      // what level 0 captured stays in the ledger
      // the flow's watcher settles level 0 on its own poll, which may trail the ledger's dispatch of level 1
      const tasks0 = levelTaskIds((await h.flow.waitForLevel(crawlId, 0, 30_000)).report);
      expect(tasks0).toHaveLength(1);
      expect(await h.tdb.db.selectFrom('archives').select('id').where('task_id', 'in', tasks0).execute()).toHaveLength(1);
      await eventually(
        async () => {
          const out = await temporalCli(['workflow', 'list', '--query', `CrawlId="${crawlId}" AND CrawlState="failed"`, '--output', 'json']);
          return (JSON.parse(out || '[]') as unknown[]).length === 1 ? true : undefined;
        },
        20_000,
        'the crawl listed as failed',
      );
    } finally {
      h.flow.setKnobs({});
    }
  }, 150_000);
});
