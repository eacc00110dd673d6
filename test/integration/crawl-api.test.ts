// The crawl routes: what a caller may send, who may start and see crawls, one crawl at a time,
// and the row/workflow invariant when Temporal is unreachable or a workflow is gone.
import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { Client, Connection } from '@temporalio/client';
import { crawlWorkflowId } from '../../temporal.config.ts';
import { BOTH_SOURCES_MESSAGE, NO_SOURCE_MESSAGE } from '../../src/domain/crawl.ts';
import { finishCrawlRow } from '../../src/store/crawls.ts';
import { cancelSignal } from '../../src/workflows/messages.ts';
import { addTarget, disableTarget } from '../../src/store/targets.ts';
import { runTargets } from '../../src/cli/targets-command.ts';
import { devHeaders } from '../support/api.ts';
import { capabilityHeader, eventually, grant, waitForCrawlEnd } from '../support/crawls.ts';
import { crawlCount, crawlRow } from '../support/crawl-rows.ts';
import { useHarness } from '../support/harness.ts';

const ORG = 'acme';
const h = useHarness({
  crawls: 'stub',
  env: { CAPTURE_LEDGER_LEVEL_TIMEOUT_SECONDS: '60', CAPTURE_LEDGER_CAPTURE_FORMATS: 'wacz,png' },
  grants: [
    ['alice', 'submitter', ORG],
    ['carol', 'submitter', 'other'],
  ],
});

/** Ends whatever crawl is running, the way an operator would: the cancel signal. */
async function endRunning(): Promise<void> {
  const running = await h.tdb.db.selectFrom('crawls').select('id').where('state', '=', 'running').execute();
  for (const r of running) {
    const ok = await h.temporal.workflow
      .getHandle(crawlWorkflowId(r.id))
      .signal(cancelSignal, { reason: 'test' })
      .then(() => true)
      .catch(() => false);
    if (ok) await waitForCrawlEnd(h.tdb.db, r.id);
    else await finishCrawlRow(h.tdb.db, r.id, { state: 'failed', stopReason: 'failed', failure: 'test cleanup' });
  }
}

afterEach(endRunning);

type Json = Record<string, unknown>;

async function post(body: unknown, headers: Record<string, string> = devHeaders('alice', [ORG]), base = h.api.url): Promise<{ status: number; body: Json }> {
  const res = await fetch(`${base}/api/crawls`, { method: 'POST', headers: { ...headers, 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return { status: res.status, body: (await res.json()) as Json };
}

async function get(path: string, headers: Record<string, string> = devHeaders('alice', [ORG])): Promise<{ status: number; body: unknown }> {
  const res = await fetch(`${h.api.url}${path}`, { headers });
  return { status: res.status, body: await res.json() };
}

describe('POST /api/crawls: what a caller may send', () => {
  it('both and neither are 400, said differently', async () => {
    const both = await post({ seeds: ['https://a.test/'], fromTargets: {} });
    const neither = await post({ maxDepth: 1 });
    expect(both).toEqual({ status: 400, body: { error: BOTH_SOURCES_MESSAGE } });
    expect(neither).toEqual({ status: 400, body: { error: NO_SOURCE_MESSAGE } });
    expect(both.body.error).not.toBe(neither.body.error);
  });

  it('the OpenAPI document states the rule as oneOf, so a request valid by the document is not refused for its source', async () => {
    const doc = (await (await fetch(`${h.api.url}/api/openapi.json`)).json()) as {
      paths: Record<string, Record<string, { requestBody: { content: Record<string, { schema: Json }> } }>>;
    };
    const body = doc.paths['/api/crawls']!.post!.requestBody.content['application/json']!.schema;
    expect(body.oneOf).toEqual([{ required: ['seeds'] }, { required: ['fromTargets'] }]);
    expect(body.additionalProperties).toBe(false);
    // with the rule kept, any other schema failure is the schema's own 400 naming the field
    expect(await post({ seeds: ['https://a.test/'], maxDepth: 'deep' })).toMatchObject({
      status: 400,
      body: { error: 'invalid request', details: [{ field: 'body.maxDepth' }] },
    });
  });

  it('a method the path does not serve is 405 with Allow', async () => {
    const res = await fetch(`${h.api.url}/api/crawls/${randomUUID()}`, { method: 'DELETE', headers: devHeaders('alice', [ORG]) });
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toBe('GET, HEAD');
  });

  it('an unknown key is 400, not dropped — capture formats included', async () => {
    const r = await post({ seeds: ['https://a.test/'], formats: ['png'] });
    expect(r.status).toBe(400);
    expect(r.body).toEqual({ error: 'invalid request', details: [{ field: 'body.formats', message: 'is not allowed' }] });
    const r2 = await post({ fromTargets: { limit: 1, org: 'other' } });
    expect(r2.status).toBe(400);
    expect(r2.body.details).toEqual([{ field: 'body.fromTargets.org', message: 'is not allowed' }]);
  });

  it('the shape of each field is the schema’s 400', async () => {
    const before = await crawlCount(h.tdb.db);
    for (const body of [
      { seeds: [] },
      { seeds: 'https://a.test/' },
      { seeds: ['https://a.test/'], maxDepth: -1 },
      { seeds: ['https://a.test/'], maxDepth: '2' },
      { seeds: ['https://a.test/'], maxPages: 0 },
      { seeds: ['https://a.test/'], perHostDelayMs: 1.5 },
      { seeds: ['https://a.test/'], hostParallelism: 0 },
      { seeds: ['https://a.test/'], rules: [] },
      { seeds: ['https://a.test/'], rules: [{ follow: 'same-site', skip: 'x.test' }] },
      { seeds: ['https://a.test/'], rules: [{ crawl: 'any' }] },
      { fromTargets: { limit: 0 } },
    ]) {
      const r = await post(body);
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(r.body.error).toBe('invalid request');
    }
    expect(await crawlCount(h.tdb.db)).toBe(before);
  });

  it('a rule list that would not do what it says is refused, naming the problem', async () => {
    const before = await crawlCount(h.tdb.db);
    expect(await post({ seeds: ['https://a.test/'], rules: [{ follow: 'same-site' }, { skip: 'same-origin' }] })).toEqual({
      status: 400,
      body: { error: 'rules that can never match', rules: [{ rule: 2, coveredBy: 1 }] },
    });
    expect(await post({ seeds: ['https://a.test/'], rules: [{ capture: 'any' }] })).toEqual({
      status: 400,
      body: { error: 'seeds the rules do not follow', seeds: ['https://a.test/'] },
    });
    expect(await post({ seeds: ['https://a.test/'], rules: [{ follow: 'not a pattern' }] })).toMatchObject({
      status: 400,
      body: { error: 'invalid rule patterns' },
    });
    expect(await post({ seeds: ['ftp://a.test/'] })).toEqual({ status: 400, body: { error: 'invalid seeds', seeds: ['ftp://a.test/'] } });
    expect(await crawlCount(h.tdb.db)).toBe(before);
  });
});

describe('POST /api/crawls: who may start one', () => {
  it('no identity is 401', async () => {
    const r = await post({ seeds: ['https://a.test/'] }, {});
    expect(r.status).toBe(401);
  });

  it('a member without can_submit, or a caller without an organization, gets 404', async () => {
    const before = await crawlCount(h.tdb.db);
    expect(await post({ seeds: ['https://a.test/'] }, devHeaders('bob', [ORG]))).toEqual({ status: 404, body: { error: 'not found' } });
    expect(await post({ seeds: ['https://a.test/'] }, devHeaders('dave', []))).toEqual({ status: 404, body: { error: 'not found' } });
    // carol may submit for "other", but the crawl goes to her first organization
    expect((await post({ seeds: ['https://a.test/'] }, devHeaders('carol', [ORG, 'other']))).status).toBe(404);
    expect(await crawlCount(h.tdb.db)).toBe(before);
  });

  it('a revoked grant takes effect at once', async () => {
    await grant(h.store.client, 'erin', 'submitter', ORG);
    await h.store.client.write({ deletes: [{ user: 'user:erin', relation: 'submitter', object: `organization:${ORG}` }] });
    expect((await post({ seeds: ['https://a.test/'] }, devHeaders('erin', [ORG]))).status).toBe(404);
  });
});

describe('POST /api/crawls: what is started', () => {
  it('applies the spec defaults, takes formats and signing from the configuration, and writes row, seed pages and job tuples', async () => {
    const r = await post({ seeds: ['https://A.test/start#top', 'https://a.test/start', 'https://a.test/other'] });
    expect(r.status).toBe(202);
    const crawlId = r.body.crawlId as string;
    const row = await crawlRow(h.tdb.db, crawlId);
    expect(row).toMatchObject({
      org_id: ORG,
      submitted_by: 'alice',
      state: 'running',
      stop_reason: null,
      seeds: ['https://a.test/start', 'https://a.test/other'],
      rules: [{ follow: 'same-origin' }],
      max_depth: 2,
      max_pages: 30,
      per_host_delay_ms: 2000,
      host_parallelism: 4,
      formats: ['wacz', 'png'],
      signing: false,
    });
    const pages = await h.tdb.db
      .selectFrom('crawl_pages')
      .select(['url', 'depth', 'host', 'action', 'state'])
      .where('crawl_id', '=', crawlId)
      .orderBy('id')
      .execute();
    expect(pages).toEqual([
      { url: 'https://a.test/start', depth: 0, host: 'a.test', action: 'follow', state: 'pending' },
      { url: 'https://a.test/other', depth: 0, host: 'a.test', action: 'follow', state: 'pending' },
    ]);
    // the workflow started with its search attributes, and dispatched the seed level
    const d = await h.hook.waitFor((x) => x.body.crawlId === crawlId);
    expect(d.body.formats).toEqual(['wacz', 'png']);
    const desc = await h.temporal.workflow.getHandle(crawlWorkflowId(crawlId)).describe();
    expect(desc.typedSearchAttributes.get({ name: 'CrawlId', type: 'KEYWORD' } as never)).toBe(crawlId);
    expect(desc.typedSearchAttributes.get({ name: 'CrawlOrg', type: 'KEYWORD' } as never)).toBe(ORG);
    expect(desc.typedSearchAttributes.get({ name: 'CrawlState', type: 'KEYWORD' } as never)).toBe('running');
    // capture_job tuples were queued with the row and delivered
    await eventually(async () => ((await h.store.client.read({ object: `capture_job:${crawlId}` })).tuples.length === 2 ? true : undefined));
  });

  it('explicit values win', async () => {
    const r = await post({
      seeds: ['https://a.test/'],
      maxDepth: 0,
      maxPages: 5,
      perHostDelayMs: 0,
      hostParallelism: 2,
      rules: [{ skip: 'https://a.test/private' }, { follow: 'same-site' }],
    });
    expect(r.status).toBe(202);
    const row = await crawlRow(h.tdb.db, r.body.crawlId as string);
    expect(row).toMatchObject({
      max_depth: 0,
      max_pages: 5,
      per_host_delay_ms: 0,
      host_parallelism: 2,
      rules: [{ skip: 'https://a.test/private' }, { follow: 'same-site' }],
    });
  });

  it('fromTargets: the organization’s enabled targets, the first n, depth 0, never fewer pages than seeds', async () => {
    expect(await post({ fromTargets: {} })).toEqual({ status: 400, body: { error: 'no enabled targets', orgId: ORG } });
    const lines: string[] = [];
    const io = { out: (l: string) => lines.push(l), err: (l: string) => lines.push(l) };
    for (const u of ['https://t1.test/', 'https://t2.test/', 'https://t3.test/', 'https://t4.test/'])
      expect(await runTargets(h.tdb.db, ['add', ORG, u], io)).toBe(0);
    expect(await runTargets(h.tdb.db, ['disable', ORG, 'https://t2.test/'], io)).toBe(0);
    await addTarget(h.tdb.db, 'other', 'https://foreign.test/');

    const limited = await post({ fromTargets: { limit: 2 } });
    expect(limited.status).toBe(202);
    const row = await crawlRow(h.tdb.db, limited.body.crawlId as string);
    expect(row).toMatchObject({ seeds: ['https://t1.test/', 'https://t3.test/'], max_depth: 0, max_pages: 30 });
    await endRunning();

    const all = await post({ fromTargets: {}, maxPages: 1, maxDepth: 1 });
    expect(all.status).toBe(202);
    const row2 = await crawlRow(h.tdb.db, all.body.crawlId as string);
    expect(row2).toMatchObject({ seeds: ['https://t1.test/', 'https://t3.test/', 'https://t4.test/'], max_depth: 1, max_pages: 3 });
    await endRunning();

    for (const u of ['https://t1.test/', 'https://t3.test/', 'https://t4.test/']) await disableTarget(h.tdb.db, ORG, u);
    expect((await post({ fromTargets: {} })).status).toBe(400);
  });
});

describe('one crawl at a time', () => {
  it('a second crawl while one runs is 409; once it ends the next one starts', async () => {
    const first = await post({ seeds: ['https://a.test/'] });
    expect(first.status).toBe(202);
    expect(await post({ seeds: ['https://b.test/'] })).toEqual({ status: 409, body: { error: 'a crawl is already running' } });
    // another organization's submitter is blocked too: politeness is per host, not per tenant
    expect((await post({ seeds: ['https://c.test/'] }, devHeaders('carol', ['other']))).status).toBe(409);
    await endRunning();
    expect((await post({ seeds: ['https://b.test/'] })).status).toBe(202);
  });

  it('concurrent starts: exactly one 202, the rest 409', async () => {
    const results = await Promise.all(Array.from({ length: 10 }, (_, i) => post({ seeds: [`https://p${i}.test/`] })));
    expect(results.filter((r) => r.status === 202)).toHaveLength(1);
    expect(results.filter((r) => r.status === 409)).toHaveLength(9);
    expect(await h.tdb.db.selectFrom('crawls').select('id').where('state', '=', 'running').execute()).toHaveLength(1);
  });
});

describe('the row and the workflow never disagree', () => {
  it('Temporal unreachable at start: 503, the row is finished failed, and the next crawl is not blocked', async () => {
    const deadConnection = Connection.lazy({ address: '127.0.0.1:9', connectTimeout: '1 second' });
    const dead = new Client({ connection: deadConnection, namespace: h.api.config.temporal.namespace });
    const broken = await h.startApi({ identity: 'dev', env: h.env, deps: { temporal: dead } });
    try {
      const r = await post({ seeds: ['https://a.test/'] }, devHeaders('alice', [ORG]), broken.url);
      expect(r.status).toBe(503);
      expect(r.body.error).toMatch(/could not be started/);
      const rows = await h.tdb.db.selectFrom('crawls').selectAll().orderBy('started_at', 'desc').limit(1).execute();
      expect(rows[0]).toMatchObject({ state: 'failed', stop_reason: 'failed' });
      expect(rows[0]!.failure).toMatch(/^the workflow could not be started/);
      expect(rows[0]!.finished_at).not.toBeNull();
    } finally {
      await broken.close();
      await deadConnection.close().catch(() => undefined);
    }
    expect((await post({ seeds: ['https://a.test/'] })).status).toBe(202);
  }, 60_000);

  it('a running row whose workflow is gone is finished when the next crawl is asked for', async () => {
    // the API died between the commit and the workflow start, two minutes ago
    const orphan = await h.tdb.db
      .insertInto('crawls')
      .values({
        org_id: ORG,
        submitted_by: 'alice',
        seeds: ['https://o.test/'],
        rules: JSON.stringify([{ follow: 'same-origin' }]),
        max_depth: 0,
        max_pages: 1,
        per_host_delay_ms: 0,
        host_parallelism: 1,
        formats: ['wacz'],
        started_at: new Date(Date.now() - 120_000),
      })
      .returning('id')
      .executeTakeFirstOrThrow();
    const r = await post({ seeds: ['https://a.test/'] });
    expect(r.status).toBe(202);
    const old = await crawlRow(h.tdb.db, orphan.id);
    expect(old).toMatchObject({ state: 'failed', stop_reason: 'failed', failure: 'its workflow is not_found and the row was still running' });
  });

  it('a terminated workflow’s row is finished the same way; a young row is left alone', async () => {
    const r = await post({ seeds: ['https://a.test/'] });
    const id = r.body.crawlId as string;
    await h.temporal.workflow.getHandle(crawlWorkflowId(id)).terminate('operator');
    // young: could still be starting, so it blocks
    expect((await post({ seeds: ['https://b.test/'] })).status).toBe(409);
    await h.tdb.db
      .updateTable('crawls')
      .set({ started_at: new Date(Date.now() - 120_000) })
      .where('id', '=', id)
      .execute();
    expect((await post({ seeds: ['https://b.test/'] })).status).toBe(202);
    expect(await h.tdb.db.selectFrom('crawls').select(['state', 'failure']).where('id', '=', id).executeTakeFirstOrThrow()).toEqual({
      state: 'failed',
      failure: 'its workflow is terminated and the row was still running',
    });
  });
});

describe('reading crawls', () => {
  it('GET /api/crawls: gated on can_submit, rows carry orgId, state and before filter, waczCount through crawl_pages', async () => {
    await h.tdb.db.deleteFrom('crawls').execute();
    const mk = async (orgId: string, state: 'succeeded' | 'failed', startedAt: string, taskIds: string[] = []) => {
      const row = await h.tdb.db
        .insertInto('crawls')
        .values({
          org_id: orgId,
          submitted_by: 'x',
          seeds: [`https://${orgId}.test/`],
          rules: '[]',
          max_depth: 0,
          max_pages: 5,
          per_host_delay_ms: 0,
          host_parallelism: 1,
          formats: ['wacz'],
          state,
          stop_reason: state === 'failed' ? 'failed' : 'max_depth',
          started_at: new Date(startedAt),
          finished_at: startedAt,
        })
        .returning('id')
        .executeTakeFirstOrThrow();
      for (const [i, t] of taskIds.entries()) {
        await h.tdb.db
          .insertInto('crawl_pages')
          .values({ crawl_id: row.id, url: `https://${orgId}.test/${i}`, depth: 0, host: `${orgId}.test`, state: 'captured', task_id: t })
          .execute();
        await h.tdb.db
          .insertInto('archives')
          .values({ task_id: t, bucket: 'b', object_key: `${t}.wacz`, url: `https://${orgId}.test/${i}`, captured_at: startedAt, provenance: '{}' })
          .execute();
      }
      return row.id;
    };
    const a = await mk(ORG, 'succeeded', '2025-01-01T10:00:00.000Z', ['t-a1', 't-a2']);
    const b = await mk('other', 'failed', '2025-01-02T10:00:00.000Z');
    const c = await mk(ORG, 'succeeded', '2025-01-03T10:00:00.000Z', ['t-c1']);

    const all = await get('/api/crawls');
    expect(all.status).toBe(200);
    expect(all.body).toEqual([
      {
        id: c,
        orgId: ORG,
        state: 'succeeded',
        stopReason: 'max_depth',
        seeds: [`https://${ORG}.test/`],
        startedAt: '2025-01-03T10:00:00.000Z',
        finishedAt: '2025-01-03T10:00:00.000Z',
        waczCount: 1,
      },
      {
        id: b,
        orgId: 'other',
        state: 'failed',
        stopReason: 'failed',
        seeds: ['https://other.test/'],
        startedAt: '2025-01-02T10:00:00.000Z',
        finishedAt: '2025-01-02T10:00:00.000Z',
        waczCount: 0,
      },
      {
        id: a,
        orgId: ORG,
        state: 'succeeded',
        stopReason: 'max_depth',
        seeds: [`https://${ORG}.test/`],
        startedAt: '2025-01-01T10:00:00.000Z',
        finishedAt: '2025-01-01T10:00:00.000Z',
        waczCount: 2,
      },
    ]);
    expect(((await get('/api/crawls?state=failed')).body as Json[]).map((r) => r.id)).toEqual([b]);
    expect(((await get('/api/crawls?before=2025-01-03T10:00:00.000Z')).body as Json[]).map((r) => r.id)).toEqual([b, a]);
    expect(((await get('/api/crawls?limit=1&unknown=dropped')).body as Json[]).map((r) => r.id)).toEqual([c]);
    expect((await get('/api/crawls?state=done')).status).toBe(400);
    expect((await get('/api/crawls?before=yesterday')).status).toBe(400);
    // without can_submit: an empty array, not 403 or 404
    expect(await get('/api/crawls', devHeaders('bob', [ORG]))).toEqual({ status: 200, body: [] });
    expect(await get('/api/crawls', devHeaders('dave', []))).toEqual({ status: 200, body: [] });
    expect((await get('/api/crawls', {})).status).toBe(401);
  });

  it('GET /api/crawls/:id: 404 unless can_submit on its organization', async () => {
    const r = await post({ seeds: ['https://a.test/'], maxDepth: 1 });
    const id = r.body.crawlId as string;
    const mine = await get(`/api/crawls/${id}`);
    expect(mine.status).toBe(200);
    expect(mine.body).toMatchObject({
      id,
      orgId: ORG,
      state: 'running',
      stopReason: null,
      seeds: ['https://a.test/'],
      maxDepth: 1,
      pagesDiscovered: 1,
      pagesCaptured: 0,
      depthReached: 0,
      finishedAt: null,
      waczCount: 0,
    });
    expect(await get(`/api/crawls/${id}`, devHeaders('carol', ['other']))).toEqual({ status: 404, body: { error: 'not found' } });
    expect(await get(`/api/crawls/${id}`, devHeaders('bob', [ORG]))).toEqual({ status: 404, body: { error: 'not found' } });
    expect(await get('/api/crawls/00000000-0000-4000-8000-000000000000')).toEqual({ status: 404, body: { error: 'not found' } });
    expect((await get('/api/crawls/not-a-uuid')).status).toBe(400);
  });
});

describe('POST /api/crawls/:id/levels/:depth', () => {
  const reportTo = async (id: string, depth: number | string, body: unknown, headers: Record<string, string>) => {
    const res = await fetch(`${h.api.url}/api/crawls/${id}/levels/${depth}`, {
      method: 'POST',
      headers: { ...headers, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    return { status: res.status, body: (await res.json()) as Json };
  };

  it('takes the level capability and any valid identity; checks the body; stores and replaces', async () => {
    const r = await post({ seeds: ['https://a.test/'], maxDepth: 1 });
    const id = r.body.crawlId as string;
    const d0 = await h.hook.waitFor((d) => d.body.crawlId === id);
    const cap = capabilityHeader(d0.body);
    // hold the worker so the reports stay unadmitted while we look at them
    await h.tw.shutdown();
    try {
      const page = { url: 'https://a.test/', status: 'failed' };
      const body = { depth: 0, pages: [page] };
      const flow = devHeaders('flow', [ORG]);
      // no capability: 403 naming the header, whoever the token names; no token either: 401
      expect(await reportTo(id, 0, body, flow)).toEqual({
        status: 403,
        body: { error: 'capability refused', detail: "a level report must carry its dispatch's capability in the x-capture-capability header" },
      });
      expect(await reportTo(id, 0, body, {})).toEqual({ status: 401, body: { error: 'unauthenticated' } });
      expect(await reportTo(id, 0, body, { 'x-capture-capability': 'guessed' })).toEqual({ status: 401, body: { error: 'unauthenticated' } });
      // a wrong capability, the right one for a level never dispatched or another crawl: 403
      const wrong = {
        status: 403,
        body: { error: 'capability refused', detail: 'the x-capture-capability header matches no dispatch of level 0 of this crawl' },
      };
      expect(await reportTo(id, 0, body, { ...flow, 'x-capture-capability': 'guessed' })).toEqual(wrong);
      expect(await reportTo(id, 0, body, { ...flow, 'x-capture-capability': d0.body.capability!.slice(0, -1) })).toEqual(wrong);
      expect((await reportTo(id, 1, { depth: 1, pages: [page] }, { ...flow, ...cap })).status).toBe(403);
      expect((await reportTo('00000000-0000-4000-8000-000000000000', 0, body, { ...flow, ...cap })).status).toBe(403);
      // the body, checked once the call is bound to its level
      const bound = { ...flow, ...cap };
      expect(await reportTo(id, 0, { depth: 1, pages: [page] }, bound)).toEqual({
        status: 400,
        body: { error: 'invalid request', details: [{ field: 'body.depth', message: 'must equal the level in the URL (0)' }] },
      });
      expect((await reportTo(id, 0, { depth: 0, pages: [{ url: 'https://a.test/', status: 'done' }] }, bound)).status).toBe(400);
      expect((await reportTo(id, 0, { depth: 0, pages: [{ ...page, extra: 1 }] }, bound)).status).toBe(400);
      expect((await reportTo(id, 0, { depth: 0 }, bound)).status).toBe(400);
      expect((await reportTo(id, 0, { depth: 0, pages: [{ ...page, submittedAt: 'noon' }] }, bound)).status).toBe(400);
      expect((await reportTo(id, 0, { depth: 0, pages: [page], hosts: [{ host: 'a.test', delayMs: -1 }] }, bound)).status).toBe(400);
      expect((await reportTo(id, 'x', body, bound)).status).toBe(400);
      expect(await h.tdb.db.selectFrom('crawl_level_reports').selectAll().where('crawl_id', '=', id).execute()).toEqual([]);

      // carol holds no grant on acme: the capability is what counts
      const first = await reportTo(id, 0, body, { ...devHeaders('carol', ['other']), ...cap });
      expect(first.status).toBe(202);
      const stored = await h.tdb.db.selectFrom('crawl_level_reports').selectAll().where('crawl_id', '=', id).execute();
      expect(stored).toHaveLength(1);
      expect(stored[0]).toMatchObject({ depth: 0, report_id: first.body.reportId, reported_by: 'carol', body: { depth: 0, pages: [page] }, admitted_at: null });

      const second = await reportTo(id, 0, { depth: 0, pages: [{ ...page, status: 'skipped', skipReason: 'robots' }] }, bound);
      expect(second.status).toBe(202);
      expect(second.body.reportId).not.toBe(first.body.reportId);
      const replaced = await h.tdb.db.selectFrom('crawl_level_reports').selectAll().where('crawl_id', '=', id).execute();
      expect(replaced).toHaveLength(1);
      expect(replaced[0]).toMatchObject({
        report_id: second.body.reportId,
        reported_by: 'flow',
        body: { depth: 0, pages: [{ ...page, status: 'skipped', skipReason: 'robots' }] },
      });
    } finally {
      await h.tw.start();
    }
    // the workflow admits the newest report only: the page ends skipped by robots
    await eventually(async () => {
      const p = await h.tdb.db.selectFrom('crawl_pages').select(['state', 'skip_reason']).where('crawl_id', '=', id).executeTakeFirstOrThrow();
      return p.state === 'skipped' ? p : undefined;
    });
    const done = await waitForCrawlEnd(h.tdb.db, id);
    expect(done).toMatchObject({ state: 'succeeded', stop_reason: 'completed' });
    // reporting a finished crawl is refused
    expect(await reportTo(id, 0, { depth: 0, pages: [{ url: 'https://a.test/', status: 'failed' }] }, { ...devHeaders('flow', [ORG]), ...cap })).toEqual({
      status: 409,
      body: { error: 'the crawl is not running', state: 'succeeded' },
    });
  });
});

describe('without the webhook settings', () => {
  it('none of the crawl routes exist', async () => {
    const off = await h.startApi({
      identity: 'dev',
      env: { ...h.env, CAPTURE_LEDGER_CRAWL_WEBHOOK_URL: '', CAPTURE_LEDGER_CRAWL_WEBHOOK_TOKEN: '' },
      deps: { temporal: h.temporal },
    });
    try {
      const h = { ...devHeaders('alice', [ORG]), 'content-type': 'application/json' };
      expect((await fetch(`${off.url}/api/crawls`, { method: 'POST', headers: h, body: JSON.stringify({ seeds: ['https://a.test/'] }) })).status).toBe(404);
      expect((await fetch(`${off.url}/api/crawls`, { headers: h })).status).toBe(404);
      expect((await fetch(`${off.url}/api/crawls/00000000-0000-4000-8000-000000000000`, { headers: h })).status).toBe(404);
      expect(
        (await fetch(`${off.url}/api/crawls/00000000-0000-4000-8000-000000000000/levels/0`, { method: 'POST', headers: h, body: '{"depth":0,"pages":[]}' }))
          .status,
      ).toBe(404);
    } finally {
      await off.close();
    }
  });
});
