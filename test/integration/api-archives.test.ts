// POST /api/archives/:id/url and GET /api/archives against the real stack: Postgres, OpenFGA,
// SeaweedFS (signatures verified).
import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { devHeaders } from '../support/api.ts';
import { useHarness } from '../support/harness.ts';
import { drain, insertArchive, insertJob, insertManyArchives, makeWacz, reportedFor } from '../support/ledger.ts';
import type { Archive } from '../../src/db/types.ts';
import { createUrlSigner } from '../../src/api/presign.ts';
import { checkEndpointOf } from '../../src/fga/check.ts';
import { MAX_EXAMINED } from '../../src/api/schemas/archives.ts';
import { share, unshare } from '../../src/cli/fga-share.ts';
import { sql } from 'kysely';
import { ConsistencyPreference } from '@openfga/sdk';

const h = useHarness();
let wacz: Buffer;
let acmeArchive: Archive;
let globexArchive: Archive;
const bucket = () => h.bucket;

async function sign(id: string, headers: Record<string, string>, init: RequestInit = {}) {
  const res = await fetch(`${h.api.url}/api/archives/${id}/url`, { method: 'POST', headers, ...init });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

async function list(query: string, headers: Record<string, string>) {
  const res = await fetch(`${h.api.url}/api/archives${query}`, { headers });
  return { status: res.status, body: (await res.json()) as unknown };
}

beforeAll(async () => {
  wacz = await makeWacz('https://example.test/acme', 'acme page');
  const acmeJob = await insertJob(h.tdb.db, { orgId: 'acme', submittedBy: 'alice' });
  const globexJob = await insertJob(h.tdb.db, { orgId: 'globex', submittedBy: 'gina' });
  acmeArchive = await insertArchive(h.tdb.db, { crawlId: acmeJob, bucket: bucket(), body: wacz, s3: h.api.deps.s3, url: 'https://example.test/acme' });
  globexArchive = await insertArchive(h.tdb.db, {
    crawlId: globexJob,
    bucket: bucket(),
    body: await makeWacz('https://example.test/globex', 'globex page'),
    s3: h.api.deps.s3,
  });
  await drain(h.tdb.db, h.store.client);
});

describe('POST /api/archives/:id/url', () => {
  it('gives the owner of the job a presigned GET that downloads the WACZ bytes', async () => {
    const r = await sign(acmeArchive.id, devHeaders('alice'));
    expect(r.status).toBe(200);
    expect(r.body.expiresIn).toBe(300);
    expect(Object.keys(r.body).sort()).toEqual(['expiresIn', 'url']);
    const url = new URL(r.body.url as string);
    expect(url.searchParams.get('X-Amz-Expires')).toBe('300');
    expect(url.searchParams.get('X-Amz-SignedHeaders')).toBe('host');
    expect(url.searchParams.get('X-Amz-Signature')).toMatch(/^[0-9a-f]{64}$/);
    expect(url.searchParams.has('x-amz-checksum-mode')).toBe(false);
    const got = await fetch(url);
    expect(got.status).toBe(200);
    expect(Buffer.from(await got.arrayBuffer()).equals(wacz)).toBe(true);
  });

  it('signs keys with spaces, non-ASCII and reserved characters so that they download', async () => {
    const job = await insertJob(h.tdb.db, { orgId: 'odd', submittedBy: 'otto' });
    const body = await makeWacz('https://example.test/odd', 'odd key');
    const odd = await insertArchive(h.tdb.db, {
      crawlId: job,
      bucket: bucket(),
      body,
      s3: h.api.deps.s3,
      objectKey: `odd keys/${randomUUID()}/ä b+c(1)!'*~=&;.wacz`,
    });
    await drain(h.tdb.db, h.store.client);
    const r = await sign(odd.id, devHeaders('otto'));
    expect(r.status).toBe(200);
    const got = await fetch(r.body.url as string);
    expect(got.status).toBe(200);
    expect(Buffer.from(await got.arrayBuffer()).equals(body)).toBe(true);
  });

  it('the bucket refuses a signed URL once it has expired', async () => {
    const url = await createUrlSigner(h.api.config.s3)(acmeArchive.bucket, acmeArchive.object_key, 1);
    expect((await fetch(url)).status).toBe(200);
    await new Promise((r) => setTimeout(r, 2500));
    expect((await fetch(url)).status).toBe(403);
  });

  it('the bucket really checks the signature: a tampered URL is refused', async () => {
    const r = await sign(acmeArchive.id, devHeaders('alice'));
    const url = new URL(r.body.url as string);
    url.searchParams.set('X-Amz-Signature', '0'.repeat(64));
    expect((await fetch(url)).status).toBe(403);
    const unsigned = new URL(url.origin + url.pathname);
    expect((await fetch(unsigned)).status).toBe(403);
  });

  it('lets a member of the owning organization view (membership from the caller, not stored)', async () => {
    expect((await sign(acmeArchive.id, devHeaders('bob', ['acme']))).status).toBe(200);
    expect((await sign(acmeArchive.id, devHeaders('bob', ['other', 'acme']))).status).toBe(200);
  });

  it('gives the same 404 for an unknown id, an unrelated user and a member of another organization', async () => {
    const unknown = await sign(randomUUID(), devHeaders('alice', ['acme']));
    const unrelated = await sign(acmeArchive.id, devHeaders('dave'));
    const otherOrg = await sign(acmeArchive.id, devHeaders('gina', ['globex']));
    const ownerOfOther = await sign(globexArchive.id, devHeaders('alice', ['acme']));
    for (const r of [unknown, unrelated, otherOrg, ownerOfOther]) {
      expect(r).toEqual({ status: 404, body: { error: 'not found' } });
    }
  });

  it("signs beside an archive the archives it requires that the caller may view; another organization's and one not in the ledger only count in withheld", async () => {
    const job = await insertJob(h.tdb.db, { orgId: 'acme', submittedBy: 'alice' });
    const dependent = await insertArchive(h.tdb.db, { crawlId: job, bucket: bucket() });
    const required = await insertArchive(h.tdb.db, { crawlId: job, bucket: bucket() });
    await drain(h.tdb.db, h.store.client);
    await h.tdb.db
      .insertInto('archive_requires')
      .values([
        { archive_id: dependent.id, bucket: bucket(), object_key: required.object_key, required_id: required.id },
        { archive_id: dependent.id, bucket: bucket(), object_key: globexArchive.object_key, required_id: globexArchive.id },
        { archive_id: dependent.id, bucket: bucket(), object_key: 'test/not-yet-registered.wacz', required_id: null },
      ])
      .execute();
    const r = await sign(dependent.id, devHeaders('alice'));
    expect(r.status).toBe(200);
    const requires = r.body.requires as { id: string; objectKey: string; url: string }[];
    expect(requires.map((x) => [x.id, x.objectKey])).toEqual([[required.id, required.object_key]]);
    expect(new URL(requires[0]!.url).pathname).toBe(`/${bucket()}/${required.object_key}`);
    expect(r.body.withheld).toBe(2);
    // the archive required, itself requiring nothing, is signed alone
    expect(Object.keys((await sign(required.id, devHeaders('alice'))).body).sort()).toEqual(['expiresIn', 'url']);
  });

  it('accepts an upper-case UUID as the same archive', async () => {
    expect((await sign(acmeArchive.id.toUpperCase(), devHeaders('alice'))).status).toBe(200);
  });

  it('a non-UUID id is 400 naming params.id, before any authorization runs', async () => {
    const check = vi.spyOn(checkEndpointOf(h.api.deps.fga)!, 'check');
    try {
      for (const id of ['not-a-uuid', '123', `${acmeArchive.id}x`, `urn:uuid:${acmeArchive.id}`, 'x'.repeat(900), '%00', `${acmeArchive.id.slice(0, -1)}g`]) {
        const r = await sign(encodeURIComponent(id), devHeaders('alice'));
        expect(r.status, id).toBe(400);
        expect(r.body.error).toBe('invalid request');
        expect(JSON.stringify(r.body.details)).toContain('params.id');
      }
      expect(check).not.toHaveBeenCalled();
    } finally {
      check.mockRestore();
    }
  });

  it('refuses a body: extra keys, wrong types, malformed JSON', async () => {
    const json = { ...devHeaders('alice'), 'content-type': 'application/json' };
    const extra = await sign(acmeArchive.id, json, { body: JSON.stringify({ expiresIn: 99999 }) });
    expect(extra.status).toBe(400);
    expect(extra.body.details).toEqual([{ field: 'body.expiresIn', message: 'is not allowed' }]);
    const array = await sign(acmeArchive.id, json, { body: '[]' });
    expect(array.status).toBe(400);
    const bad = await sign(acmeArchive.id, json, { body: '{"a":' });
    expect(bad.status).toBe(400);
    const huge = await sign(acmeArchive.id, json, { body: JSON.stringify({ x: 'y'.repeat(2 * 1024 * 1024) }) });
    expect(huge.status).toBe(413);
  });

  it('is 401 without an identity', async () => {
    expect(await sign(acmeArchive.id, {})).toEqual({ status: 401, body: { error: 'unauthenticated' } });
  });

  it('checks at HIGHER_CONSISTENCY with the caller organizations as contextual tuples and current_time', async () => {
    // the lean check (src/fga/check.ts) asks it, batched with others in flight; what it sends is
    // what requestBody builds
    const endpoint = checkEndpointOf(h.api.deps.fga)!;
    const check = vi.spyOn(endpoint, 'decide');
    try {
      expect((await sign(acmeArchive.id, devHeaders('bob', ['acme']))).status).toBe(200);
      expect(check).toHaveBeenCalledTimes(1);
      const sent = JSON.parse(endpoint.requestBody(check.mock.calls[0]![0])) as Record<string, unknown> & { context: { current_time: string } };
      expect(sent).toMatchObject({
        tuple_key: { user: 'user:bob', relation: 'can_view', object: `archive:${acmeArchive.id}` },
        contextual_tuples: { tuple_keys: [{ user: 'user:bob', relation: 'member', object: 'organization:acme' }] },
        authorization_model_id: h.store.modelId,
        consistency: 'HIGHER_CONSISTENCY',
      });
      expect(Math.abs(Date.parse(sent.context.current_time) - Date.now())).toBeLessThan(5000);
    } finally {
      check.mockRestore();
    }
  });
});

const t0 = new Date('2030-01-01T00:00:00.000Z');
let lists: Promise<{ crawlA: string; crawlB: string }> | undefined;
/** Written once, by whichever describe needs it first (a describe run alone gets it too). */
function seedLists(): Promise<{ crawlA: string; crawlB: string }> {
  lists ??= (async () => {
    // 300 archives for acme's job "A", 30 interleaved for a job of org "tiny": a "tiny" member may
    // see 10% of the newest rows.
    const crawlA = await insertJob(h.tdb.db, { orgId: 'acme', submittedBy: 'alice' });
    const crawlB = await insertJob(h.tdb.db, { orgId: 'tiny', submittedBy: 'tom' });
    await drain(h.tdb.db, h.store.client);
    for (let i = 0; i < 330; i++) {
      const capturedAt = new Date(t0.getTime() - i * 60_000);
      await h.tdb.db
        .insertInto('archives')
        .values({
          task_id: `list-${i}`,
          bucket: bucket(),
          object_key: `list/${i}.wacz`,
          url: `https://example.test/${i}`,
          final_url: null,
          sha256: null,
          size: i,
          provenance: '{}',
          captured_at: capturedAt,
        })
        .execute()
        .then(async () => {
          const row = await h.tdb.db.selectFrom('archives').select('id').where('task_id', '=', `list-${i}`).executeTakeFirstOrThrow();
          await h.store.client.write({ writes: [{ user: `capture_job:${i % 11 === 0 ? crawlB : crawlA}`, relation: 'parent', object: `archive:${row.id}` }] });
          await reportedFor(h.tdb.db, i % 11 === 0 ? crawlB : crawlA, [{ taskId: `list-${i}`, url: `https://example.test/${i}` }]);
        });
    }
    return { crawlA, crawlB };
  })();
  return lists;
}

describe('GET /api/archives', () => {
  let crawlA: string;
  let crawlB: string;

  beforeAll(async () => {
    ({ crawlA, crawlB } = await seedLists());
  });

  it('lists newest first, with the row shape, default page 50', async () => {
    const r = await list('', devHeaders('alice'));
    expect(r.status).toBe(200);
    const rows = r.body as Record<string, unknown>[];
    expect(rows).toHaveLength(50);
    const times = rows.map((x) => Date.parse(x.capturedAt as string));
    expect([...times].sort((a, b) => b - a)).toEqual(times);
    expect(rows[0]).toEqual({
      id: expect.any(String),
      taskId: 'list-1',
      url: 'https://example.test/1',
      finalUrl: null,
      bucket: bucket(),
      objectKey: 'list/1.wacz',
      sha256: null,
      size: 1,
      capturedAt: new Date(t0.getTime() - 60_000).toISOString(),
      indexedAt: null,
      title: null,
      thumbnail: null,
      qa: null,
    });
  });

  it('fills a page for a caller who may see only one row in eleven from what OpenFGA lists them, with no check per row; each row is one OpenFGA lets them view', async () => {
    const endpoint = checkEndpointOf(h.api.deps.fga)!;
    const cached = vi.spyOn(endpoint, 'batchCheckCached');
    const strong = vi.spyOn(endpoint, 'decide');
    const sdkBatch = vi.spyOn(h.api.deps.fga, 'batchCheck');
    const check = vi.spyOn(h.api.deps.fga, 'check');
    let r: Awaited<ReturnType<typeof list>>;
    try {
      r = await list('?limit=25', devHeaders('tina', ['tiny']));
      expect(r.status).toBe(200);
      const rows = r.body as { taskId: string }[];
      expect(rows.map((x) => x.taskId)).toEqual(Array.from({ length: 25 }, (_, k) => `list-${k * 11}`));
      // the reached crawl and the shares are OpenFGA's answer: no row is asked about again
      for (const spy of [check, strong, sdkBatch, cached]) expect(spy).not.toHaveBeenCalled();
    } finally {
      for (const spy of [cached, strong, sdkBatch, check]) spy.mockRestore();
    }
    // and OpenFGA, asked of each row shown and at its strongest, agrees
    const asked = await Promise.all(
      (r.body as { id: string }[]).map((row) =>
        h.store.client.check(
          {
            user: 'user:tina',
            relation: 'can_view',
            object: `archive:${row.id}`,
            contextualTuples: [{ user: 'user:tina', relation: 'member', object: 'organization:tiny' }],
            context: { current_time: new Date().toISOString() },
          },
          { consistency: ConsistencyPreference.HigherConsistency },
        ),
      ),
    );
    expect(asked.map((x) => x.allowed)).toEqual(Array.from({ length: 25 }, () => true));
  });

  it('an archive whose parent tuple is still in the outbox is not listed, as a check would refuse it; once OpenFGA has the tuple it is', async () => {
    const crawl = await insertJob(h.tdb.db, { orgId: 'pending-org', submittedBy: 'pat' });
    await drain(h.tdb.db, h.store.client);
    const archive = await insertArchive(h.tdb.db, { crawlId: crawl, bucket: bucket(), url: 'https://example.test/pending' });
    const member = devHeaders('paula', ['pending-org']);
    expect(await list('', member)).toEqual({ status: 200, body: [] });
    expect((await sign(archive.id, member)).status).toBe(404);
    await drain(h.tdb.db, h.store.client);
    const after = await list('', member);
    expect(after.status).toBe(200);
    expect((after.body as { id: string }[]).map((x) => x.id)).toEqual([archive.id]);
  });

  it('pages with before = the capturedAt of the last row, without gaps or repeats', async () => {
    const seen: string[] = [];
    let before: string | undefined;
    for (;;) {
      const r = await list(`?limit=7${before ? `&before=${encodeURIComponent(before)}` : ''}`, devHeaders('tina', ['tiny']));
      expect(r.status).toBe(200);
      const rows = r.body as { taskId: string; capturedAt: string }[];
      seen.push(...rows.map((x) => x.taskId));
      if (rows.length < 7) break;
      before = rows[rows.length - 1]!.capturedAt;
    }
    expect(seen).toEqual(Array.from({ length: 30 }, (_, k) => `list-${k * 11}`));
  });

  it('breaks ties on captured_at by id, descending', async () => {
    const job = await insertJob(h.tdb.db, { orgId: 'ties', submittedBy: 'tess' });
    const same = new Date('2031-05-05T05:05:05.000Z');
    const rows = [];
    for (let i = 0; i < 5; i++) rows.push(await insertArchive(h.tdb.db, { crawlId: job, bucket: bucket(), capturedAt: same }));
    await drain(h.tdb.db, h.store.client);
    const r = await list('?limit=5', devHeaders('tess'));
    expect((r.body as { id: string }[]).map((x) => x.id)).toEqual(
      rows
        .map((x) => x.id)
        .sort()
        .reverse(),
    );
  });

  it('shows nothing (200 []) to a caller who may see nothing', async () => {
    expect(await list('', devHeaders('nobody'))).toEqual({ status: 200, body: [] });
  });

  it('drops unknown query parameters', async () => {
    const r = await list('?limit=3&sort=asc&owner=alice&before=2030-01-01T00:00:00Z&x[y]=1', devHeaders('alice'));
    expect(r.status).toBe(200);
    expect((r.body as { taskId: string }[]).map((x) => x.taskId)).toEqual(['list-1', 'list-2', 'list-3']);
  });

  it.each([
    ['?before=yesterday', 'querystring.before'],
    ['?before=2030-01-01', 'querystring.before'],
    ['?before=2030-13-01T00:00:00Z', 'querystring.before'],
    ['?before=' + '2'.repeat(100), 'querystring.before'],
    ['?limit=0', 'querystring.limit'],
    ['?limit=201', 'querystring.limit'],
    ['?limit=abc', 'querystring.limit'],
    ['?limit=1.5', 'querystring.limit'],
    ['?limit=1e9', 'querystring.limit'],
  ])('%s is 400 naming %s', async (query, field) => {
    const r = await list(query, devHeaders('alice'));
    expect(r.status).toBe(400);
    expect(r.body).toMatchObject({ error: 'invalid request', details: [expect.objectContaining({ field })] });
  });

  it('accepts limit up to 200 and ISO 8601 with an offset', async () => {
    const r = await list('?limit=200&before=2030-01-01T09:00:00%2B09:00', devHeaders('alice'));
    expect(r.status).toBe(200);
    const rows = r.body as { taskId: string; capturedAt: string }[];
    expect(rows).toHaveLength(200);
    expect(rows[0]!.taskId).toBe('list-1');
  });

  it('is 401 without an identity', async () => {
    expect(await list('', {})).toEqual({ status: 401, body: { error: 'unauthenticated' } });
  });

  it('wrote nothing while answering', async () => {
    const before = await h.tdb.db
      .selectFrom('fga_outbox')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow();
    await list('?limit=abc', devHeaders('alice'));
    await sign('nope', devHeaders('alice'));
    await list('', devHeaders('alice'));
    const after = await h.tdb.db
      .selectFrom('fga_outbox')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow();
    expect(Number(after.n)).toBe(Number(before.n));
    expect(crawlA).not.toBe(crawlB);
  });
});

describe('insertManyArchives fixture', () => {
  it('queues one parent tuple per archive', async () => {
    const job = await insertJob(h.tdb.db, { orgId: 'bulk', submittedBy: 'bea' });
    const ids = await insertManyArchives(h.tdb.db, job, bucket(), 120, new Date('2020-01-01T00:00:00Z'));
    expect(await drain(h.tdb.db, h.store.client)).toBe(122);
    const r = await fetch(`${h.api.url}/api/archives?before=2020-01-01T00:00:01Z&limit=200`, { headers: devHeaders('bea') });
    expect(((await r.json()) as { id: string }[]).map((x) => x.id)).toEqual(ids);
  });
});

interface Listed {
  status: number;
  rows: { id: string; capturedAt: string; taskId: string }[];
  link: string | null;
  stoppedEarly: string | null;
}

async function listPage(query: string, headers: Record<string, string>): Promise<Listed> {
  const res = await fetch(`${h.api.url}/api/archives${query}`, { headers });
  return { status: res.status, rows: (await res.json()) as Listed['rows'], link: res.headers.get('link'), stoppedEarly: res.headers.get('x-stopped-early') };
}

/** The query of a Link rel="next" header, as `?before=…`. */
function nextQuery(link: string | null): string | undefined {
  if (link === null) return undefined;
  const m = /^<\/api\/archives(\?[^>]*)>; rel="next"$/.exec(link);
  expect(m, link).not.toBeNull();
  return m![1];
}

describe('GET /api/archives: the tie-breaker', () => {
  let ids: string[];
  const at = new Date('2032-02-02T02:02:02.123Z');

  beforeAll(async () => {
    const job = await insertJob(h.tdb.db, { orgId: 'same', submittedBy: 'sam' });
    ids = await insertManyArchives(h.tdb.db, job, bucket(), 120, at);
    await h.tdb.db.updateTable('archives').set({ captured_at: at }).where('id', 'in', ids).execute();
    await drain(h.tdb.db, h.store.client);
  });

  it('120 archives sharing one capturedAt, paged 50 at a time with before and beforeId: none lost, none twice', async () => {
    const seen: string[] = [];
    let query = '?limit=50';
    let pages = 0;
    for (;;) {
      const r = await listPage(query, devHeaders('sam'));
      expect(r.status).toBe(200);
      expect(r.stoppedEarly).toBe('false');
      pages += 1;
      seen.push(...r.rows.map((x) => x.id));
      if (r.rows.length < 50) break;
      const last = r.rows[r.rows.length - 1]!;
      expect(last.capturedAt).toBe(at.toISOString());
      query = `?limit=50&before=${encodeURIComponent(last.capturedAt)}&beforeId=${last.id}`;
    }
    expect(pages).toBe(3);
    expect(seen).toEqual([...ids].sort().reverse());
  });

  it('the Link header pages the same way and ends when nothing is left', async () => {
    const seen: string[] = [];
    let query: string | undefined = '?limit=50';
    while (query !== undefined) {
      const r = await listPage(query, devHeaders('sam'));
      seen.push(...r.rows.map((x) => x.id));
      query = nextQuery(r.link);
    }
    expect(seen).toEqual([...ids].sort().reverse());
  });

  it('before alone keeps its meaning: strictly older than that capturedAt', async () => {
    const r = await listPage(`?limit=50&before=${encodeURIComponent(at.toISOString())}`, devHeaders('sam'));
    expect(r.rows).toEqual([]);
    const upper = [...ids].sort().reverse();
    const from = await listPage(`?limit=50&before=${encodeURIComponent(at.toISOString())}&beforeId=${upper[9]!.toUpperCase()}`, devHeaders('sam'));
    expect(from.rows.map((x) => x.id)).toEqual(upper.slice(10, 60));
  });

  it.each([
    [`?beforeId=${randomUUID()}`, 'querystring.beforeId'],
    ['?before=2032-02-02T02:02:02.123Z&beforeId=nope', 'querystring.beforeId'],
  ])('%s is 400 naming %s', async (query, field) => {
    const r = await list(query, devHeaders('sam'));
    expect(r.status).toBe(400);
    expect(r.body).toMatchObject({ error: 'invalid request', details: [expect.objectContaining({ field })] });
  });

  it('documents the Link and X-Stopped-Early headers in OpenAPI', async () => {
    const doc = (await (await fetch(`${h.api.url}/api/openapi.json`)).json()) as {
      paths: Record<string, { get: { responses: Record<string, { headers?: Record<string, unknown> }> } }>;
    };
    expect(
      Object.keys(doc.paths['/api/archives']!.get.responses['200']!.headers ?? {})
        .map((h) => h.toLowerCase())
        .sort(),
    ).toEqual(['link', 'x-stopped-early']);
  });
});

describe('signing with OpenFGA caches on', () => {
  it('a revoked share gets 404 on signing at once, even right after lists asked (and cached) the same question', async () => {
    const job = await insertJob(h.tdb.db, { orgId: 'revoked', submittedBy: 'rex' });
    const a = await insertArchive(h.tdb.db, { crawlId: job, bucket: bucket() });
    await drain(h.tdb.db, h.store.client);
    await share({ db: h.tdb.db, fga: h.store.client }, a.id, 'vic', '1h');
    for (let i = 0; i < 3; i++) expect((await listPage('', devHeaders('vic'))).rows.map((x) => x.id)).toEqual([a.id]);
    expect((await sign(a.id, devHeaders('vic'))).status).toBe(200);
    await unshare({ db: h.tdb.db, fga: h.store.client }, a.id, 'user:vic');
    expect(await sign(a.id, devHeaders('vic'))).toEqual({ status: 404, body: { error: 'not found' } });
  });
});

describe('GET /api/archives over 100,000 archives', () => {
  beforeAll(async () => {
    await seedLists();
    await sql`INSERT INTO archives (task_id, bucket, object_key, url, provenance, captured_at)
      SELECT 'hundredk-' || g, ${bucket()}, 'hundredk/' || g || '.wacz', 'https://example.test/h/' || g, '{}', timestamptz '2001-01-01T00:00:00Z' - g * interval '1 second'
      FROM generate_series(1, 100000) g`.execute(h.tdb.db);
    // 'hoarder' owns 1,000 capture jobs without archives: ListObjects answers at its maximum, an
    // answer the listing cannot take as whole, so every archive is a candidate checked in turn
    for (let i = 0; i < 1000; i += 100) {
      await h.store.client.write({
        writes: Array.from({ length: 100 }, () => ({ user: 'user:hoarder', relation: 'owner', object: `capture_job:${randomUUID()}` })),
      });
    }
  }, 120_000);

  it('a caller who sees nothing stops at its bound, says so, and continues where it stopped with a cursor that names no archive', async () => {
    const batch = vi.spyOn(checkEndpointOf(h.api.deps.fga)!, 'batchCheckCached');
    try {
      const first = await listPage('?limit=50', devHeaders('hoarder'));
      expect(first.status, JSON.stringify(first.rows)).toBe(200);
      expect(first.rows).toEqual([]);
      expect(first.stoppedEarly).toBe('true');
      const checked = () => batch.mock.calls.reduce((n, [questions]) => n + questions.length, 0);
      expect(checked()).toBe(MAX_EXAMINED);
      const next = new URLSearchParams(nextQuery(first.link)!.slice(1));
      expect(next.get('limit')).toBe('50');
      const before = new Date(next.get('before')!);
      expect(await h.tdb.db.selectFrom('archives').select('id').where('captured_at', '=', before).execute()).toEqual([]);
      const beforeId = next.get('beforeId');
      if (beforeId !== null) expect(await h.tdb.db.selectFrom('archives').select('id').where('id', '=', beforeId).execute()).toEqual([]);
      // exactly MAX_EXAMINED candidates lie before the cursor
      const newer = await h.tdb.db
        .selectFrom('archives')
        .select((eb) => eb.fn.countAll<string>().as('n'))
        .where('captured_at', '>', before)
        .executeTakeFirstOrThrow();
      expect(Number(newer.n)).toBe(MAX_EXAMINED);

      batch.mockClear();
      const second = await listPage(nextQuery(first.link)!, devHeaders('hoarder'));
      expect(second).toMatchObject({ status: 200, rows: [], stoppedEarly: 'true' });
      expect(checked()).toBe(MAX_EXAMINED);
      expect(new Date(new URLSearchParams(nextQuery(second.link)!.slice(1)).get('before')!).getTime()).toBeLessThan(before.getTime());
    } finally {
      batch.mockRestore();
    }
  });

  it('a caller who reaches no crawl and no share is answered from the authorization side: no candidate read', async () => {
    const batch = vi.spyOn(checkEndpointOf(h.api.deps.fga)!, 'batchCheckCached');
    try {
      const r = await listPage('?limit=50', devHeaders('stranger', ['nowhere']));
      expect(r).toEqual({ status: 200, rows: [], link: null, stoppedEarly: 'false' });
      expect(batch).not.toHaveBeenCalled();
    } finally {
      batch.mockRestore();
    }
  });

  it('a member of an organization sees its archives among them, newest first, from its crawls only', async () => {
    const r = await listPage('?limit=25', devHeaders('tina', ['tiny']));
    expect(r.rows.map((x) => x.taskId)).toEqual(Array.from({ length: 25 }, (_, k) => `list-${k * 11}`));
    expect(r.stoppedEarly).toBe('false');
  });
});
