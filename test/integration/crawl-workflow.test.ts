// The crawl workflow on the real Temporal dev server, with a real worker in this process, the
// real API taking the level reports, and a webhook receiver standing in for the capture flow's
// inbox: this file plays the flow's part by hand, so every report is exactly what a test needs.
import { describe, expect, it } from 'vitest';
import { WorkflowFailedError } from '@temporalio/client';
import { CRAWL_WORKFLOW, crawlWorkflowId } from '../../temporal.config.ts';
import type { PageReport } from '../../src/domain/contract.ts';
import { insertCrawl } from '../../src/store/crawls.ts';
import { CRAWL_STATE_KEY } from '../../src/temporal/search-attributes.ts';
import type { crawl as crawlWorkflow, CrawlWorkflowInput } from '../../src/workflows/crawl.ts';
import { cancelSignal, levelReportedSignal, progressQuery } from '../../src/workflows/messages.ts';
import { BEHAVIOR_DEFAULTS } from '../../src/domain/crawl.ts';
import { outboxDrained } from '../support/outbox.ts';
import { devHeaders } from '../support/api.ts';
import { useHarness } from '../support/harness.ts';
import { startTestWorker, uniqueTaskQueue } from '../support/temporal.ts';
import { eventually, levelPrefix, waitForCrawlEnd, writeCapture } from '../support/crawls.ts';

const ORG = 'acme';
const FLOW = 'capture-flow';
const TOKEN = 'wf-test-token';

const taskQueue = uniqueTaskQueue('crawl-wf');
// a test that fails mid-crawl leaves no crawl running for the next one (useHarness's afterEach)
const h = useHarness({
  crawls: 'stub',
  env: { CAPTURE_LEDGER_CRAWL_WEBHOOK_TOKEN: TOKEN, CAPTURE_LEDGER_TEMPORAL_TASK_QUEUE: taskQueue, CAPTURE_LEDGER_LEVEL_TIMEOUT_SECONDS: '30' },
  grants: [['alice', 'submitter', ORG]],
});

async function startCrawl(body: Record<string, unknown>): Promise<string> {
  const res = await fetch(`${h.api.url}/api/crawls`, {
    method: 'POST',
    headers: { ...devHeaders('alice', [ORG]), 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  expect(res.status, await res.clone().text()).toBe(202);
  return ((await res.json()) as { crawlId: string }).crawlId;
}

async function report(crawlId: string, depth: number, pages: PageReport[]): Promise<Response> {
  return fetch(`${h.api.url}/api/crawls/${crawlId}/levels/${depth}`, {
    method: 'POST',
    headers: { ...devHeaders(FLOW, [ORG]), ...h.hook.capability(crawlId, depth), 'content-type': 'application/json' },
    body: JSON.stringify({ depth, pages }),
  });
}

/** A crawl started directly on Temporal (no API), for knobs the API does not expose. */
async function startDirect(opts: { seeds: string[]; maxDepth?: number; input?: Partial<CrawlWorkflowInput>; queue?: string }): Promise<string> {
  const { id } = await insertCrawl(h.tdb.db, {
    orgId: ORG,
    submittedBy: 'alice',
    seeds: opts.seeds,
    rules: [{ follow: 'same-origin' }],
    maxDepth: opts.maxDepth ?? 0,
    maxPages: 30,
    perHostDelayMs: 0,
    hostParallelism: 4,
    formats: ['wacz'],
    signing: false,
    seedLevel: { take: opts.seeds, cut: [] },
  });
  await h.temporal.workflow.start<typeof crawlWorkflow>(CRAWL_WORKFLOW, {
    taskQueue: opts.queue ?? taskQueue,
    workflowId: crawlWorkflowId(id),
    args: [{ crawlId: id, orgId: ORG, levelTimeoutSeconds: 30, ...opts.input }],
  });
  return id;
}

const prefix = levelPrefix;

describe('crawl workflow', () => {
  it('runs level by level: dispatch, report, admission, next level, max_depth', async () => {
    const crawlId = await startCrawl({ seeds: ['http://a.test/'], maxDepth: 1, perHostDelayMs: 1500 });

    const d0 = await h.hook.waitFor((d) => d.body.crawlId === crawlId && d.body.depth === 0);
    expect(d0.authorization).toBe(`Bearer ${TOKEN}`);
    expect(d0.body).toEqual({
      crawlId,
      depth: 0,
      orgId: ORG,
      reportUrl: `${h.api.url}/api/crawls/${crawlId}/levels/0`,
      formats: ['wacz'],
      signing: false,
      perHostDelayMs: 1500,
      hostParallelism: 4,
      behaviors: { seconds: BEHAVIOR_DEFAULTS.behaviorsSeconds, siteSpecific: true },
      notBefore: {},
      pages: [{ url: 'http://a.test/', follow: true }],
      capability: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
      artifactPrefix: `captures/${crawlId}/0/`,
      deadline: expect.any(String),
      heartbeatUrl: `${h.api.url}/api/crawls/${crawlId}/levels/0/heartbeat`,
    });
    // the level's deadline is the dispatch time plus the level timeout (30 s here)
    expect(Date.parse(d0.body.deadline!) - d0.at).toBeGreaterThan(25_000);
    expect(Date.parse(d0.body.deadline!) - d0.at).toBeLessThanOrEqual(31_000);
    const progress0 = await eventually(async () => {
      const p = await h.tw.client.workflow.getHandle(crawlWorkflowId(crawlId)).query(progressQuery);
      return p.phase === 'waiting' ? p : undefined;
    });
    expect(progress0).toMatchObject({ crawlId, phase: 'waiting', depth: 0, maxDepth: 1, cancelRequested: false });
    expect(progress0.levels).toEqual([
      { depth: 0, dispatched: 1, reportId: null, captured: 0, failed: 0, skipped: 0, archives: 0, nextLevelPages: 0, cutPages: 0 },
    ]);

    const finishedAt = new Date(Date.now() - 1000);
    const seed = await writeCapture(h.s3, h.bucket, prefix(crawlId, 0), {
      url: 'http://a.test/',
      finishedAt,
      links: [
        { href: '/x' },
        { href: '/y?b=1&a=2' },
        { href: '/x#again' },
        { href: '/nf', rel: 'nofollow' },
        { href: 'http://b.test/elsewhere' },
        { href: 'mailto:someone@a.test' },
      ],
    });
    const r0 = await report(crawlId, 0, [seed]);
    expect(r0.status).toBe(202);
    const { reportId } = (await r0.json()) as { reportId: string };
    expect(reportId).toMatch(/^[0-9a-f-]{36}$/);

    const d1 = await h.hook.waitFor((d) => d.body.crawlId === crawlId && d.body.depth === 1);
    // the last level asks for no links; pacing carries over from the previous level
    expect(d1.body.pages).toEqual([
      { url: 'http://a.test/x', follow: false },
      { url: 'http://a.test/y?b=1&a=2', follow: false },
    ]);
    expect(d1.body.notBefore).toEqual({ 'a.test': new Date(finishedAt.getTime() + 1500).toISOString() });

    // the same level reported again after the next one went out: the same rows, archives, tuples
    const again = await report(crawlId, 0, [seed]);
    expect(again.status).toBe(202);

    const x = await writeCapture(h.s3, h.bucket, prefix(crawlId, 1), { url: 'http://a.test/x' });
    const y = await writeCapture(h.s3, h.bucket, prefix(crawlId, 1), { url: 'http://a.test/y?b=1&a=2', outcome: 'failed' });
    expect((await report(crawlId, 1, [x, y])).status).toBe(202);

    const row = await waitForCrawlEnd(h.tdb.db, crawlId);
    expect(row).toMatchObject({ state: 'succeeded', stop_reason: 'max_depth', depth_reached: 1, dispatched_depth: 1, failure: null });

    const detail = (await (await fetch(`${h.api.url}/api/crawls/${crawlId}`, { headers: devHeaders('alice', [ORG]) })).json()) as Record<string, unknown>;
    // discovered: the three pages and b.test/elsewhere, which no rule took (rule 0)
    expect(detail).toMatchObject({
      state: 'succeeded',
      stopReason: 'max_depth',
      pagesDiscovered: 4,
      pagesCaptured: 2,
      pagesFailed: 1,
      waczCount: 2,
      depthReached: 1,
    });

    // this crawl's archives (earlier tests may have left their own)
    const archives = await h.tdb.db
      .selectFrom('archives')
      .selectAll()
      .where('task_id', 'in', (eb) => eb.selectFrom('capture_submissions').select('task_id').where('crawl_id', '=', crawlId))
      .orderBy('url')
      .execute();
    expect(archives.map((a) => a.task_id).sort()).toEqual([seed.taskId, x.taskId].sort());
    const subs = await h.tdb.db.selectFrom('capture_submissions').selectAll().where('crawl_id', '=', crawlId).execute();
    expect(subs.map((s) => s.task_id).sort()).toEqual([seed.taskId, x.taskId, y.taskId].sort());
    expect(subs.every((s) => s.org_id === ORG && s.submitted_by === 'alice' && s.manifest_key !== null)).toBe(true);

    // decisions of level 0: two same-origin links followed, one other-origin link skipped (rule 0)
    const decisions = await h.tdb.db
      .selectFrom('crawl_decisions')
      .select(['depth', 'rule', 'action', 'hostname', 'links'])
      .where('crawl_id', '=', crawlId)
      .orderBy('rule')
      .execute();
    expect(decisions).toEqual([
      { depth: 0, rule: 0, action: 'skip', hostname: 'b.test', links: 1 },
      { depth: 0, rule: 1, action: 'follow', hostname: 'a.test', links: 2 },
    ]);

    // each archive has exactly its one parent tuple in OpenFGA, delivered by the worker's outbox wake
    await outboxDrained(h.tdb.db);
    for (const a of archives) {
      const t = await h.store.client.read({ object: `archive:${a.id}` });
      expect(t.tuples.map((tt) => [tt.key.user, tt.key.relation])).toEqual([[`capture_job:${crawlId}`, 'parent']]);
    }
    const job = await h.store.client.read({ object: `capture_job:${crawlId}` });
    expect(job.tuples.map((t) => `${t.key.user} ${t.key.relation}`).sort()).toEqual([`organization:${ORG} parent`, 'user:alice owner']);
    expect(await h.tdb.db.selectFrom('fga_outbox').selectAll().execute()).toEqual([]);

    const result = await h.tw.client.workflow.getHandle(crawlWorkflowId(crawlId)).result();
    expect(result).toMatchObject({ state: 'succeeded', stopReason: 'max_depth' });
    const desc = await h.tw.client.workflow.getHandle(crawlWorkflowId(crawlId)).describe();
    expect(desc.typedSearchAttributes.get(CRAWL_STATE_KEY)).toBe('succeeded');
    expect(result.levels.map((l: { depth: number; captured: number }) => [l.depth, l.captured])).toEqual([
      [0, 1],
      [1, 1],
    ]);
  });

  it('the manifest wins; cancelled captures stay failed; every task id is attributed', async () => {
    const urls = ['http://c.test/lying', 'http://c.test/cancelled', 'http://c.test/lost', 'http://c.test/private', 'http://c.test/missing'];
    const crawlId = await startCrawl({ seeds: urls, maxDepth: 0 });
    await h.hook.waitFor((d) => d.body.crawlId === crawlId && d.body.depth === 0);
    const p = prefix(crawlId, 0);
    const lying = await writeCapture(h.s3, h.bucket, p, { url: urls[0]!, reported: 'failed' });
    const cancelled = await writeCapture(h.s3, h.bucket, p, { url: urls[1]!, outcome: 'cancelled' });
    const lost: PageReport = { url: urls[2]!, status: 'failed', taskId: 'task-lost-' + crawlId, manifestError: 'upload timed out' };
    const robots: PageReport = { url: urls[3]!, status: 'skipped', skipReason: 'robots' };
    const missing = await writeCapture(h.s3, h.bucket, p, { url: urls[4]!, noManifest: true });
    expect((await report(crawlId, 0, [lying, cancelled, lost, robots, missing])).status).toBe(202);

    const row = await waitForCrawlEnd(h.tdb.db, crawlId);
    expect(row).toMatchObject({ state: 'succeeded', stop_reason: 'max_depth' });
    const pages = await h.tdb.db
      .selectFrom('crawl_pages')
      .select(['url', 'state', 'skip_reason', 'task_id'])
      .where('crawl_id', '=', crawlId)
      .orderBy('id')
      .execute();
    expect(pages.map((pg) => [pg.url, pg.state, pg.skip_reason])).toEqual([
      [urls[0], 'captured', null], // reported failed, manifest succeeded
      [urls[1], 'failed', null],
      [urls[2], 'failed', null],
      [urls[3], 'skipped', 'robots'],
      [urls[4], 'captured', null], // the report stands; nothing at the key, so no archive
    ]);
    const archives = await h.tdb.db.selectFrom('archives').select('task_id').where('task_id', 'in', [lying.taskId, cancelled.taskId, missing.taskId]).execute();
    expect(archives.map((a) => a.task_id)).toEqual([lying.taskId]);
    const subs = await h.tdb.db
      .selectFrom('capture_submissions')
      .select(['task_id', 'manifest_key', 'manifest_error'])
      .where('crawl_id', '=', crawlId)
      .orderBy('task_id')
      .execute();
    expect(subs).toHaveLength(4);
    expect(subs.find((s) => s.task_id === lost.taskId)).toEqual({ task_id: lost.taskId, manifest_key: null, manifest_error: 'upload timed out' });
    expect(subs.find((s) => s.task_id === missing.taskId)?.manifest_key).toBe(missing.manifestKey);
  });

  it('maxPages cuts the frontier, and the crawl says max_pages', async () => {
    const crawlId = await startCrawl({ seeds: ['http://k.test/'], maxDepth: 2, maxPages: 3, perHostDelayMs: 0 });
    await h.hook.waitFor((d) => d.body.crawlId === crawlId && d.body.depth === 0);
    const seed = await writeCapture(h.s3, h.bucket, prefix(crawlId, 0), { url: 'http://k.test/', links: [1, 2, 3, 4, 5].map((i) => ({ href: `/${i}` })) });
    expect((await report(crawlId, 0, [seed])).status).toBe(202);
    const d1 = await h.hook.waitFor((d) => d.body.crawlId === crawlId && d.body.depth === 1);
    expect(d1.body.pages).toEqual([
      { url: 'http://k.test/1', follow: true },
      { url: 'http://k.test/2', follow: true },
    ]);
    const pages = await Promise.all(
      ['1', '2'].map((n) => writeCapture(h.s3, h.bucket, prefix(crawlId, 1), { url: `http://k.test/${n}`, links: [{ href: '/6' }] })),
    );
    expect((await report(crawlId, 1, pages)).status).toBe(202);
    const row = await waitForCrawlEnd(h.tdb.db, crawlId);
    expect(row).toMatchObject({ state: 'succeeded', stop_reason: 'max_pages', depth_reached: 1, dispatched_depth: 1 });
    const detail = (await (await fetch(`${h.api.url}/api/crawls/${crawlId}`, { headers: devHeaders('alice', [ORG]) })).json()) as Record<string, unknown>;
    // discovered: the seed, five links (three cut), and /6 found at level 1 (cut too)
    expect(detail).toMatchObject({ stopReason: 'max_pages', pagesDiscovered: 7, pagesCaptured: 3, pagesSkipped: 4 });
    expect(h.hook.dispatches.filter((d) => d.body.crawlId === crawlId).map((d) => d.body.depth)).toEqual([0, 1]);
  });

  it('a level never reported fails the crawl, and the next crawl can start', async () => {
    const crawlId = await startDirect({ seeds: ['http://d.test/'], input: { levelTimeoutSeconds: 2 } });
    await h.hook.waitFor((d) => d.body.crawlId === crawlId);
    const row = await waitForCrawlEnd(h.tdb.db, crawlId, 20_000);
    expect(row).toMatchObject({ state: 'failed', stop_reason: 'failed', failure: 'level 0 was not reported within 2s' });
    expect(row.finished_at).not.toBeNull();
    // a report arriving after the crawl ended is refused, not stored for nothing
    const late = await report(crawlId, 0, [{ url: 'http://d.test/', status: 'failed' }]);
    expect(late.status).toBe(409);
    const next = await startCrawl({ seeds: ['http://d.test/next'], maxDepth: 0 });
    await h.hook.waitFor((d) => d.body.crawlId === next);
    expect((await report(next, 0, [{ url: 'http://d.test/next', status: 'failed' }])).status).toBe(202);
    expect(await waitForCrawlEnd(h.tdb.db, next)).toMatchObject({ state: 'succeeded', stop_reason: 'max_depth' });
  });

  it('a dispatch that keeps failing is retried, then fails the crawl', async () => {
    h.hook.status = 503;
    try {
      const crawlId = await startDirect({ seeds: ['http://e.test/'], input: { dispatchAttempts: 2 } });
      const row = await waitForCrawlEnd(h.tdb.db, crawlId, 20_000);
      expect(row.state).toBe('failed');
      expect(row.stop_reason).toBe('failed');
      expect(row.failure).toContain('answered 503');
      const history = await h.tw.client.workflow.getHandle(crawlWorkflowId(crawlId)).fetchHistory();
      const attempts = history.events!.filter((e) => e.activityTaskStartedEventAttributes).map((e) => e.activityTaskStartedEventAttributes!.attempt);
      expect(attempts).toContain(2);
    } finally {
      h.hook.status = 202;
    }
  });

  it('a dispatch the flow refuses (401) fails at once, without retries', async () => {
    h.hook.status = 401;
    try {
      const crawlId = await startDirect({ seeds: ['http://e.test/refused'], input: { dispatchAttempts: 5 } });
      const started = Date.now();
      const row = await waitForCrawlEnd(h.tdb.db, crawlId, 20_000);
      expect(Date.now() - started).toBeLessThan(5000);
      expect(row).toMatchObject({ state: 'failed', stop_reason: 'failed' });
      expect(row.failure).toContain('answered 401');
    } finally {
      h.hook.status = 202;
    }
  });

  it('the cancel signal ends the crawl as failed', async () => {
    const crawlId = await startCrawl({ seeds: ['http://f.test/'], maxDepth: 2 });
    await h.hook.waitFor((d) => d.body.crawlId === crawlId);
    const handle = h.tw.client.workflow.getHandle(crawlWorkflowId(crawlId));
    await handle.signal(cancelSignal, { reason: 'operator asked' });
    const row = await waitForCrawlEnd(h.tdb.db, crawlId);
    expect(row).toMatchObject({ state: 'failed', stop_reason: 'failed', failure: 'cancelled: operator asked' });
    await handle.result();
    const progress = await handle.query(progressQuery);
    expect(progress).toMatchObject({ phase: 'done', cancelRequested: true, stopReason: 'failed' });
    expect((await handle.describe()).typedSearchAttributes.get(CRAWL_STATE_KEY)).toBe('failed');
  });

  it('a workflow cancelled through Temporal still finishes its row', async () => {
    const crawlId = await startCrawl({ seeds: ['http://f.test/tc'], maxDepth: 0 });
    await h.hook.waitFor((d) => d.body.crawlId === crawlId);
    await h.tw.client.workflow.getHandle(crawlWorkflowId(crawlId)).cancel();
    const row = await waitForCrawlEnd(h.tdb.db, crawlId);
    expect(row).toMatchObject({ state: 'failed', stop_reason: 'failed', failure: 'workflow cancelled' });
  });

  it('survives the worker being killed mid-crawl', async () => {
    const crawlId = await startCrawl({ seeds: ['http://g.test/'], maxDepth: 1 });
    await h.hook.waitFor((d) => d.body.crawlId === crawlId && d.body.depth === 0);
    await h.tw.shutdown(); // the worker is gone while the crawl waits for its report
    const seed = await writeCapture(h.s3, h.bucket, prefix(crawlId, 0), { url: 'http://g.test/', links: [{ href: '/one' }] });
    expect((await report(crawlId, 0, [seed])).status).toBe(202);
    await new Promise((r) => setTimeout(r, 500));
    expect(h.hook.dispatches.some((d) => d.body.crawlId === crawlId && d.body.depth === 1)).toBe(false);
    await h.tw.start(); // a fresh worker picks the crawl up from its history
    await h.hook.waitFor((d) => d.body.crawlId === crawlId && d.body.depth === 1);
    const one = await writeCapture(h.s3, h.bucket, prefix(crawlId, 1), { url: 'http://g.test/one' });
    expect((await report(crawlId, 1, [one])).status).toBe(202);
    const row = await waitForCrawlEnd(h.tdb.db, crawlId);
    expect(row).toMatchObject({ state: 'succeeded', stop_reason: 'max_depth', depth_reached: 1 });
    const archives = await h.tdb.db.selectFrom('archives').select('task_id').where('task_id', 'in', [seed.taskId, one.taskId]).execute();
    expect(archives).toHaveLength(2);
  });

  it('a workflow whose row does not exist exits without doing anything, and no longer says it is running', async () => {
    const ghost = '00000000-0000-4000-8000-000000000001';
    const before = h.hook.dispatches.length;
    // started as the API starts one (a start whose row never committed)
    const handle = await h.tw.client.workflow.start<typeof crawlWorkflow>(CRAWL_WORKFLOW, {
      taskQueue,
      workflowId: crawlWorkflowId(ghost),
      args: [{ crawlId: ghost, orgId: ORG, levelTimeoutSeconds: 30 }],
      typedSearchAttributes: [{ key: CRAWL_STATE_KEY, value: 'running' }],
    });
    expect(await handle.result()).toEqual({ crawlId: ghost, state: 'absent', stopReason: null, failure: null, levels: [] });
    expect((await handle.describe()).typedSearchAttributes.get(CRAWL_STATE_KEY)).toBe('absent');
    expect(h.hook.dispatches.length).toBe(before);
    expect(await h.tdb.db.selectFrom('crawls').select('id').where('id', '=', ghost).execute()).toEqual([]);
  });

  it('pages whose manifest cannot be read stay out of the ledger, attributed for reconcile', async () => {
    // a second worker whose S3 is unreachable, on a queue of its own
    const queue = uniqueTaskQueue('crawl-wf-s3down');
    const broken = await startTestWorker({
      config: { ...h.config, temporal: { ...h.config.temporal, taskQueue: queue }, s3: { ...h.config.s3, endpoint: 'http://127.0.0.1:9' } },
      db: h.tdb.db,
      fga: h.store.client,
    });
    try {
      const crawlId = await startDirect({ seeds: ['http://h.test/'], queue });
      await h.hook.waitFor((d) => d.body.crawlId === crawlId);
      const page = await writeCapture(h.s3, h.bucket, prefix(crawlId, 0), { url: 'http://h.test/' });
      expect((await report(crawlId, 0, [page])).status).toBe(202);
      const row = await waitForCrawlEnd(h.tdb.db, crawlId, 60_000);
      expect(row).toMatchObject({ state: 'succeeded', stop_reason: 'max_depth' });
      expect(await h.tdb.db.selectFrom('archives').select('id').where('task_id', '=', page.taskId).execute()).toEqual([]);
      const sub = await h.tdb.db.selectFrom('capture_submissions').selectAll().where('task_id', '=', page.taskId).executeTakeFirstOrThrow();
      expect(sub).toMatchObject({ org_id: ORG, submitted_by: 'alice', crawl_id: crawlId, manifest_key: page.manifestKey, manifest_error: null });
      const pg = await h.tdb.db.selectFrom('crawl_pages').selectAll().where('crawl_id', '=', crawlId).executeTakeFirstOrThrow();
      expect(pg).toMatchObject({ state: 'captured', task_id: page.taskId });
    } finally {
      await broken.stop();
    }
  }, 90_000);

  it('signals are deduplicated by report id', async () => {
    const crawlId = await startCrawl({ seeds: ['http://i.test/'], maxDepth: 0 });
    await h.hook.waitFor((d) => d.body.crawlId === crawlId);
    await h.tw.shutdown();
    try {
      const page = await writeCapture(h.s3, h.bucket, prefix(crawlId, 0), { url: 'http://i.test/' });
      const res = await report(crawlId, 0, [page]);
      const { reportId } = (await res.json()) as { reportId: string };
      // the same signal delivered twice more (signals are at-least-once)
      const handle = h.tw.client.workflow.getHandle(crawlWorkflowId(crawlId));
      await handle.signal(levelReportedSignal, { depth: 0, reportId });
      await handle.signal(levelReportedSignal, { depth: 0, reportId });
    } finally {
      await h.tw.start();
    }
    await waitForCrawlEnd(h.tdb.db, crawlId);
    const history = await h.tw.client.workflow.getHandle(crawlWorkflowId(crawlId)).fetchHistory();
    const admits = history.events!.filter((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'admitLevel');
    expect(admits).toHaveLength(1);
  });

  it('a failed workflow result is never a thrown workflow error', async () => {
    // failures end the crawl's row; the workflow itself completes with the outcome
    const crawlId = await startDirect({ seeds: ['http://j.test/'], input: { levelTimeoutSeconds: 1 } });
    const result = await h.tw.client.workflow
      .getHandle(crawlWorkflowId(crawlId))
      .result()
      .catch((e: unknown) => e);
    expect(result).not.toBeInstanceOf(WorkflowFailedError);
    expect(result).toMatchObject({ state: 'failed', stopReason: 'failed' });
    await eventually(async () =>
      (await h.tdb.db.selectFrom('crawls').select('state').where('id', '=', crawlId).executeTakeFirst())?.state === 'failed' ? true : undefined,
    );
  });
});
