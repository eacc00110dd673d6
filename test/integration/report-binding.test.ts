// A level report speaks only for its own dispatch (issue 12, Deliver 3 and 4), over the real
// stack: the API with JWTs from a dev issuer, the crawl workflow on a real worker, S3, OpenFGA.
// Forged reports are played by hand against a webhook stub; the last tests relay the stub to the
// real capture flow capturing a real site, for an organization the flow holds no grant on.
import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { MockActivityEnvironment } from '@temporalio/testing';
import { crawlWorkflowId } from '../../temporal.config.ts';
import { createDispatchLevel } from '../../src/activities/dispatch-level.ts';
import type { CrawlProgress } from '../../src/domain/crawl.ts';
import type { Manifest, ManifestArtifact, PageReport } from '../../src/domain/contract.ts';
import { MAX_REPORTS_PER_LEVEL } from '../../src/domain/level.ts';
import { capabilityHash } from '../../src/ledger/capability.ts';
import { reconcile } from '../../src/ledger/reconcile.ts';
import { clientCredentialsAuth } from '../../src/flow/report.ts';
import { progressQuery } from '../../src/workflows/messages.ts';
import type { Flow } from '../../src/flow/server.ts';
import { TEST_FLOW_CLIENT_SECRET, type TestIssuer } from '../support/api.ts';
import { capabilityHeader, eventually, grant, levelPrefix, putJson, waitForCrawlEnd, writeCapture } from '../support/crawls.ts';
import { useHarness } from '../support/harness.ts';

const ORG = 'acme';
const LEVEL_TIMEOUT_S = 120;

const h = useHarness({
  issuer: true,
  crawls: 'stub',
  // the site the reference capture flow captures in the last tests
  site: { hosts: { n: { pages: { '/': '<title>New org home</title><a href="/one">one</a>', '/one': '<title>One</title><p>first</p>' } } } },
  env: { CAPTURE_LEDGER_LEVEL_TIMEOUT_SECONDS: String(LEVEL_TIMEOUT_S) },
  // alice may start crawls; the reporter ("capture-flow") holds no grant on anything
  grants: [['alice', 'submitter', ORG]],
});
let stranger: TestIssuer;

beforeAll(async () => {
  stranger = await h.startIssuer();
});

async function startCrawl(body: Record<string, unknown>, org = ORG): Promise<string> {
  const res = await fetch(`${h.api.url}/api/crawls`, {
    method: 'POST',
    headers: { ...(await h.issuer.auth('alice', [org])), 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  expect(res.status, await res.clone().text()).toBe(202);
  return ((await res.json()) as { crawlId: string }).crawlId;
}

async function report(
  crawlId: string,
  depth: number,
  body: unknown,
  headers: Record<string, string>,
): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetch(`${h.api.url}/api/crawls/${crawlId}/levels/${depth}`, {
    method: 'POST',
    headers: { ...headers, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

/** A token naming the flow and no organization: it proves who reports, nothing more. */
const flowToken = (): Promise<Record<string, string>> => h.issuer.auth('capture-flow', []);

const progress = (crawlId: string): Promise<CrawlProgress> => h.tw.client.workflow.getHandle(crawlWorkflowId(crawlId)).query(progressQuery);

/** A manifest at exactly the dispatched key, naming the artifacts given: what a lying capturer writes. */
async function writeManifest(
  crawlId: string,
  depth: number,
  url: string,
  artifacts: (taskId: string) => ManifestArtifact[],
): Promise<PageReport & { taskId: string; manifestKey: string }> {
  const taskId = randomUUID();
  const manifestKey = `${levelPrefix(crawlId, depth)}/${taskId}.result.json`;
  const m: Manifest = {
    taskId,
    url,
    finalUrl: url,
    status: 'succeeded',
    artifacts: artifacts(taskId),
    software: 'test-capturer',
    finishedAt: new Date().toISOString(),
  };
  await putJson(h.s3, h.bucket, manifestKey, m);
  return { url, status: 'captured', taskId, manifestKey, submittedAt: new Date(Date.now() - 100).toISOString(), finishedAt: new Date().toISOString() };
}

describe('forged reports are refused and register nothing', () => {
  it('no capability, a wrong one, or a manifest key outside the level: refused before anything is stored or signalled', async () => {
    const seed = 'http://f.test/';
    const crawlId = await startCrawl({ seeds: [seed], maxDepth: 0 });
    const d0 = await h.hook.waitFor((d) => d.body.crawlId === crawlId && d.body.depth === 0);
    // the ledger keeps only a digest of the capability it sent
    const kept = await h.tdb.db.selectFrom('crawl_level_dispatches').selectAll().where('crawl_id', '=', crawlId).executeTakeFirstOrThrow();
    expect(kept.capability_hashes).toEqual([capabilityHash(d0.body.capability!)]);
    expect(JSON.stringify(kept)).not.toContain(d0.body.capability!);
    expect(kept.artifact_prefix).toBe(`captures/${crawlId}/0/`);

    const token = await flowToken();
    const good = await writeCapture(h.s3, h.bucket, levelPrefix(crawlId, 0), { url: seed });
    const body = { depth: 0, pages: [good] };
    expect(await report(crawlId, 0, body, token)).toEqual({
      status: 403,
      body: { error: 'capability refused', detail: "a level report must carry its dispatch's capability in the x-capture-capability header" },
    });
    expect((await report(crawlId, 0, body, { ...token, 'x-capture-capability': `${d0.body.capability!}x` })).status).toBe(403);
    expect((await report(crawlId, 0, body, { ...token, 'x-capture-capability': capabilityHash(d0.body.capability!).toString('base64url') })).status).toBe(403);

    // a real manifest of this crawl's seed, written under another crawl's prefix in our bucket
    const elsewhere = await writeCapture(h.s3, h.bucket, levelPrefix(randomUUID(), 0), { url: seed });
    const bound = { ...token, ...capabilityHeader(d0.body) };
    expect(await report(crawlId, 0, { depth: 0, pages: [elsewhere] }, bound)).toEqual({
      status: 400,
      body: {
        error: 'manifest keys outside the level',
        detail: `every manifestKey must be captures/${crawlId}/0/<taskId>.result.json (a task id of letters, digits, '.', '_' and '-')`,
        count: 1,
        pages: [{ url: seed, taskId: elsewhere.taskId, manifestKey: elsewhere.manifestKey, expected: `captures/${crawlId}/0/${elsewhere.taskId}.result.json` }],
      },
    });
    // the right prefix with another task's key, and a task id that climbs out of the prefix
    expect((await report(crawlId, 0, { depth: 0, pages: [{ ...good, taskId: randomUUID() }] }, bound)).status).toBe(400);
    expect(
      (await report(crawlId, 0, { depth: 0, pages: [{ ...good, taskId: '..', manifestKey: `captures/${crawlId}/0/...result.json` }] }, bound)).status,
    ).toBe(400);

    // nothing stored, nothing signalled: the workflow still waits for its first report
    expect(await h.tdb.db.selectFrom('crawl_level_reports').selectAll().where('crawl_id', '=', crawlId).execute()).toEqual([]);
    expect(await h.tdb.db.selectFrom('capture_submissions').selectAll().where('crawl_id', '=', crawlId).execute()).toEqual([]);
    expect((await h.tdb.db.selectFrom('crawl_level_dispatches').select('reports').where('crawl_id', '=', crawlId).executeTakeFirstOrThrow()).reports).toBe(0);
    const p = await eventually(async () => {
      const now = await progress(crawlId);
      return now.phase === 'dispatching' ? undefined : now;
    });
    expect(p).toMatchObject({ phase: 'waiting', cancelRequested: false });
    expect(p.levels[0]!.reportId).toBeNull();

    // and the real report is taken
    expect((await report(crawlId, 0, body, bound)).status).toBe(202);
    expect(await waitForCrawlEnd(h.tdb.db, crawlId)).toMatchObject({ state: 'succeeded', stop_reason: 'max_depth' });
    expect(await h.tdb.db.selectFrom('archives').select('task_id').where('task_id', '=', good.taskId).execute()).toHaveLength(1);
  });

  it('artifacts in a foreign bucket or under a foreign prefix: the page fails with the reason, nothing of it is registered or followed', async () => {
    const site = 'http://g.test';
    const seeds = [`${site}/`, `${site}/bucket`, `${site}/prefix`, `${site}/links`];
    const crawlId = await startCrawl({ seeds, maxDepth: 1 });
    const d0 = await h.hook.waitFor((d) => d.body.crawlId === crawlId && d.body.depth === 0);
    const other = levelPrefix(randomUUID(), 0);
    // what the foreign keys would hold: a links artifact that would widen the crawl
    await putJson(h.s3, h.bucket, `${other}/stolen.links.json`, { url: `${site}/links`, links: [{ href: '/stolen' }] });

    const good = await writeCapture(h.s3, h.bucket, levelPrefix(crawlId, 0), { url: `${site}/`, links: [{ href: '/next' }] });
    const own = (taskId: string, ext: string, format: ManifestArtifact['format'] = 'wacz'): ManifestArtifact => ({
      format,
      bucket: h.bucket,
      key: `${levelPrefix(crawlId, 0)}/${taskId}.${ext}`,
      sha256: 'f'.repeat(64),
      size: 10,
    });
    const foreignBucket = await writeManifest(crawlId, 0, `${site}/bucket`, (t) => [{ ...own(t, 'wacz'), bucket: 'someone-elses' }]);
    const foreignPrefix = await writeManifest(crawlId, 0, `${site}/prefix`, () => [
      { format: 'wacz', bucket: h.bucket, key: `${other}/x.wacz`, sha256: 'f'.repeat(64), size: 10 },
    ]);
    const foreignLinks = await writeManifest(crawlId, 0, `${site}/links`, (t) => [
      own(t, 'wacz'),
      { format: 'links', bucket: h.bucket, key: `${other}/stolen.links.json`, sha256: 'e'.repeat(64), size: 10 },
    ]);

    const res = await report(
      crawlId,
      0,
      { depth: 0, pages: [good, foreignBucket, foreignPrefix, foreignLinks] },
      { ...(await flowToken()), ...capabilityHeader(d0.body) },
    );
    expect(res.status).toBe(202);
    const d1 = await h.hook.waitFor((d) => d.body.crawlId === crawlId && d.body.depth === 1);
    // only the good page's link: /stolen was never read
    expect(d1.body.pages).toEqual([{ url: `${site}/next`, follow: false }]);

    const pages = await h.tdb.db
      .selectFrom('crawl_pages')
      .select(['url', 'state'])
      .where('crawl_id', '=', crawlId)
      .where('depth', '=', 0)
      .orderBy('url')
      .execute();
    expect(pages).toEqual([
      { url: `${site}/`, state: 'captured' },
      { url: `${site}/bucket`, state: 'failed' },
      { url: `${site}/links`, state: 'failed' },
      { url: `${site}/prefix`, state: 'failed' },
    ]);
    const archives = await h.tdb.db
      .selectFrom('archives')
      .select(['task_id', 'bucket', 'object_key'])
      .where('task_id', 'in', [good.taskId, foreignBucket.taskId, foreignPrefix.taskId, foreignLinks.taskId])
      .execute();
    expect(archives).toEqual([{ task_id: good.taskId, bucket: h.bucket, object_key: `${levelPrefix(crawlId, 0)}/${good.taskId}.wacz` }]);
    // the reason is kept where reconcile reads, with the key: reconcile skips them the same way
    const subs = await h.tdb.db
      .selectFrom('capture_submissions')
      .select(['task_id', 'manifest_key', 'manifest_error'])
      .where('crawl_id', '=', crawlId)
      .execute();
    const errorOf = new Map(subs.map((s) => [s.task_id, s.manifest_error]));
    expect(errorOf.get(good.taskId)).toBeNull();
    expect(errorOf.get(foreignBucket.taskId)).toBe(
      `artifact "${levelPrefix(crawlId, 0)}/${foreignBucket.taskId}.wacz" (wacz) is in bucket "someone-elses", not "${h.bucket}"`,
    );
    expect(errorOf.get(foreignPrefix.taskId)).toBe(`artifact "${other}/x.wacz" (wacz) is not under "captures/${crawlId}/0/"`);
    expect(errorOf.get(foreignLinks.taskId)).toBe(`artifact "${other}/stolen.links.json" (links) is not under "captures/${crawlId}/0/"`);

    expect(
      (await report(crawlId, 1, { depth: 1, pages: [{ url: `${site}/next`, status: 'failed' }] }, { ...(await flowToken()), ...capabilityHeader(d1.body) }))
        .status,
    ).toBe(202);
    expect(await waitForCrawlEnd(h.tdb.db, crawlId)).toMatchObject({ state: 'succeeded', stop_reason: 'max_depth' });
    // only the good archive ever reaches OpenFGA
    const tuples = await h.store.client.read({ user: `capture_job:${crawlId}`, relation: 'parent', object: 'archive:' });
    expect(tuples.tuples.map((t) => t.key.object)).toHaveLength(1);
    // reconcile reads the same keys and refuses the same manifests: nothing registered there either
    const rec = await reconcile({ db: h.tdb.db, s3: h.s3, bucket: h.bucket });
    expect(rec).toMatchObject({ registered: 0, skippedBy: { refused: 3 } });
    expect(
      await h.tdb.db
        .selectFrom('archives')
        .select('task_id')
        .where('task_id', 'in', [foreignBucket.taskId, foreignPrefix.taskId, foreignLinks.taskId])
        .execute(),
    ).toEqual([]);
  });

  it(`a level takes at most ${MAX_REPORTS_PER_LEVEL} reports`, async () => {
    const crawlId = await startCrawl({ seeds: ['http://h.test/'], maxDepth: 0 });
    const d0 = await h.hook.waitFor((d) => d.body.crawlId === crawlId && d.body.depth === 0);
    const bound = { ...(await flowToken()), ...capabilityHeader(d0.body) };
    // hold the worker: the reports stay queued instead of ending the crawl
    await h.tw.shutdown();
    let last = '';
    try {
      for (let i = 0; i < MAX_REPORTS_PER_LEVEL; i += 1) {
        const r = await report(crawlId, 0, { depth: 0, pages: [{ url: 'http://h.test/', status: 'failed', manifestError: `attempt ${i}` }] }, bound);
        expect(r.status).toBe(202);
        last = r.body.reportId as string;
      }
      expect(await report(crawlId, 0, { depth: 0, pages: [{ url: 'http://h.test/', status: 'failed' }] }, bound)).toEqual({
        status: 409,
        body: { error: `level 0 was already reported ${MAX_REPORTS_PER_LEVEL} times; no more reports of it are taken` },
      });
      expect((await h.tdb.db.selectFrom('crawl_level_reports').select('report_id').where('crawl_id', '=', crawlId).executeTakeFirstOrThrow()).report_id).toBe(
        last,
      );
    } finally {
      await h.tw.start();
    }
    expect(await waitForCrawlEnd(h.tdb.db, crawlId)).toMatchObject({ state: 'succeeded' });
  });
});

describe('a dispatch sent again', () => {
  it('mints another capability and keeps the earlier one valid: the flow may be working on the first', async () => {
    const crawlId = await startCrawl({ seeds: ['http://m.test/'], maxDepth: 0 });
    const first = await h.hook.waitFor((d) => d.body.crawlId === crawlId && d.body.depth === 0);
    // the activity retried, as Temporal retries it when the webhook's answer was lost
    const dispatchLevel = createDispatchLevel({ config: h.config, db: h.tdb.db });
    await new MockActivityEnvironment().run(dispatchLevel, { crawlId, depth: 0, levelTimeoutSeconds: LEVEL_TIMEOUT_S });
    const again = await h.hook.waitFor((d) => d.body.crawlId === crawlId && d.body.depth === 0 && d.body.capability !== first.body.capability);
    expect(again.body.artifactPrefix).toBe(first.body.artifactPrefix);
    const kept = await h.tdb.db.selectFrom('crawl_level_dispatches').select('capability_hashes').where('crawl_id', '=', crawlId).executeTakeFirstOrThrow();
    expect(kept.capability_hashes).toEqual([capabilityHash(first.body.capability!), capabilityHash(again.body.capability!)]);
    // the first dispatch's capability still reports the level
    expect(
      (
        await report(
          crawlId,
          0,
          { depth: 0, pages: [{ url: 'http://m.test/', status: 'failed' }] },
          { ...(await flowToken()), ...capabilityHeader(first.body) },
        )
      ).status,
    ).toBe(202);
    expect(await waitForCrawlEnd(h.tdb.db, crawlId)).toMatchObject({ state: 'succeeded' });
  });
});

describe('the level deadline', () => {
  it('is dispatched with the level and recorded; a report once it has passed is refused', async () => {
    const crawlId = await startCrawl({ seeds: ['http://l.test/'], maxDepth: 0 });
    const d0 = await h.hook.waitFor((d) => d.body.crawlId === crawlId && d.body.depth === 0);
    const kept = await h.tdb.db.selectFrom('crawl_level_dispatches').select('deadline').where('crawl_id', '=', crawlId).executeTakeFirstOrThrow();
    expect(new Date(kept.deadline).toISOString()).toBe(d0.body.deadline);
    expect(Date.parse(d0.body.deadline!) - d0.at).toBeGreaterThan((LEVEL_TIMEOUT_S - 5) * 1000);
    // the workflow's own timer has not run out yet: only the route's check stands in the way
    const past = new Date(Date.now() - 1000);
    await h.tdb.db.updateTable('crawl_level_dispatches').set({ deadline: past }).where('crawl_id', '=', crawlId).execute();
    expect(
      await report(crawlId, 0, { depth: 0, pages: [{ url: 'http://l.test/', status: 'failed' }] }, { ...(await flowToken()), ...capabilityHeader(d0.body) }),
    ).toEqual({
      status: 409,
      body: { error: `level 0 is past its deadline (${past.toISOString()})` },
    });
    expect(await h.tdb.db.selectFrom('crawl_level_reports').selectAll().where('crawl_id', '=', crawlId).execute()).toEqual([]);
  });
});

describe('a report refused anyway fails the crawl at once', () => {
  it('the right capability with a token from another issuer: 401, and the crawl fails now, not at the level timeout', async () => {
    const crawlId = await startCrawl({ seeds: ['http://r.test/'], maxDepth: 0 });
    const d0 = await h.hook.waitFor((d) => d.body.crawlId === crawlId && d.body.depth === 0);
    const asked = Date.now();
    const res = await report(
      crawlId,
      0,
      { depth: 0, pages: [{ url: 'http://r.test/', status: 'failed' }] },
      { ...(await stranger.auth('capture-flow', [ORG])), ...capabilityHeader(d0.body) },
    );
    expect(res.status).toBe(401);
    expect(res.body.error).toBe('unauthenticated');
    expect(res.body.detail).toMatch(/^the report carried level 0's capability but its token was refused \(.+\); the crawl fails$/);
    const row = await waitForCrawlEnd(h.tdb.db, crawlId, 20_000);
    expect(Date.now() - asked).toBeLessThan(LEVEL_TIMEOUT_S * 1000);
    expect(row).toMatchObject({ state: 'failed', stop_reason: 'failed' });
    expect(row.failure).toMatch(/^level 0 report refused: JW/);
    expect(await h.tdb.db.selectFrom('crawl_level_reports').selectAll().where('crawl_id', '=', crawlId).execute()).toEqual([]);
  });

  it('no token at all with the right capability: the same', async () => {
    const crawlId = await startCrawl({ seeds: ['http://s.test/'], maxDepth: 0 });
    const d0 = await h.hook.waitFor((d) => d.body.crawlId === crawlId && d.body.depth === 0);
    expect((await report(crawlId, 0, { depth: 0, pages: [] }, capabilityHeader(d0.body))).status).toBe(401);
    expect(await waitForCrawlEnd(h.tdb.db, crawlId, 20_000)).toMatchObject({ state: 'failed', failure: 'level 0 report refused: no authorization header' });
  });
});

describe('the reference capture flow, with no grant on any organization', () => {
  let flow: Flow;
  const lines: string[] = [];

  beforeAll(async () => {
    flow = await h.startFlow({ log: (l) => lines.push(l) });
  });

  it('a crawl for an organization created just now completes', async () => {
    const org = `new-${randomUUID().slice(0, 8)}`;
    await grant(h.store.client, 'alice', 'submitter', org);
    h.hook.relay = { to: flow.webhookUrl };
    const crawlId = await startCrawl({ seeds: [h.site.url('n', '/')], maxDepth: 1, perHostDelayMs: 100 }, org);
    const row = await waitForCrawlEnd(h.tdb.db, crawlId, 90_000);
    expect(row).toMatchObject({ org_id: org, state: 'succeeded', stop_reason: 'max_depth', failure: null });
    const pages = await h.tdb.db.selectFrom('crawl_pages').select(['url', 'state']).where('crawl_id', '=', crawlId).orderBy('url').execute();
    expect(pages).toEqual([
      { url: h.site.url('n', '/'), state: 'captured' },
      { url: h.site.url('n', '/one'), state: 'captured' },
    ]);
    const reports = await h.tdb.db
      .selectFrom('crawl_level_reports')
      .select(['depth', 'reported_by'])
      .where('crawl_id', '=', crawlId)
      .orderBy('depth')
      .execute();
    expect(reports).toEqual([
      { depth: 0, reported_by: 'capture-flow' },
      { depth: 1, reported_by: 'capture-flow' },
    ]);
    expect(
      await h.tdb.db
        .selectFrom('archives as a')
        .innerJoin('crawl_pages as p', 'p.task_id', 'a.task_id')
        .select('a.id')
        .where('p.crawl_id', '=', crawlId)
        .execute(),
    ).toHaveLength(2);
    // and the flow holds no grant on that organization (nor any other)
    const granted = await h.store.client.read({ user: 'user:capture-flow', relation: 'submitter', object: `organization:${org}` });
    expect(granted.tuples).toEqual([]);
    expect(lines.filter((l) => l.includes('REPORT REFUSED'))).toEqual([]);
  });

  it('a flow whose token the API refuses says so loudly, stops retrying, and the crawl fails at once', async () => {
    const refusedLines: string[] = [];
    const bad = await h.startFlow({
      reportAuth: clientCredentialsAuth(stranger.url, TEST_FLOW_CLIENT_SECRET),
      log: (l) => refusedLines.push(l),
    });
    try {
      h.hook.relay = { to: bad.webhookUrl };
      const crawlId = await startCrawl({ seeds: [h.site.url('n', '/')], maxDepth: 0, perHostDelayMs: 100 });
      const row = await waitForCrawlEnd(h.tdb.db, crawlId, 60_000);
      expect(row).toMatchObject({ state: 'failed', stop_reason: 'failed' });
      expect(row.failure).toMatch(/^level 0 report refused: /);
      const level = await bad.waitForLevel(crawlId, 0, 30_000);
      expect(level.state).toBe('report-failed');
      expect(level.outcome!.attempts).toHaveLength(1);
      expect(level.outcome!.status).toBe(401);
      expect(refusedLines.filter((l) => l.startsWith(`!!! REPORT REFUSED: level ${crawlId}/0 answered 401`))).toHaveLength(1);
    } finally {
      await bad.close();
    }
  });
});
