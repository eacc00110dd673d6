// Full-text search over the real node: WACZ objects in SeaweedFS, rows in a test database, tuples
// in a test OpenFGA store, documents in an OpenSearch index of this file's own.
import { execFile } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { promisify } from 'node:util';
import { PutObjectCommand } from '@aws-sdk/client-s3';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createIndexActivities } from '../../src/activities/index-crawl.ts';
import type { Archive } from '../../src/db/types.ts';
import { archiveView } from '../../src/store/archives.ts';
import type { WaczPage } from '../../src/domain/wacz/write.ts';
import { createSearchIndex, type SearchIndex } from '../../src/search/client.ts';
import { MAX_BULK_BYTES } from '../../src/search/bulk-batches.ts';
import { indexCrawl, MAX_PAGES_JSONL_BYTES, PAGES_ENTRY, readArchivePages } from '../../src/search/indexer.ts';
import { MAX_PAGE_TEXT_BYTES } from '../../src/domain/page-text.ts';
import { forgetIndex } from '../../src/search/schema.ts';
import { s3RangeSource } from '../../src/search/s3-range.ts';
import { DEFAULT_TAIL_BYTES, readZipEntry } from '../../src/search/zip-range.ts';
import { devHeaders, type TestApi } from '../support/api.ts';
import type { TestDatabase } from '../support/db.ts';
import type { TestStore } from '../support/fga.ts';
import { ROOT } from '../support/env.ts';
import { useHarness } from '../support/harness.ts';
import { drain, insertArchive, insertJob } from '../support/ledger.ts';
import { startTestWorker, uniqueTaskQueue } from '../support/temporal.ts';
import { oneResponseWacz } from '../support/wacz.ts';

const execFileAsync = promisify(execFile);
/** a page's text as a hostile page made it: 60 MiB */
const HUGE_TEXT = 60 * 1024 * 1024;
const INDEX = `cl-test-search-${randomBytes(4).toString('hex')}`;
const OPENSEARCH_URL = 'http://127.0.0.1:9200';

const harness = useHarness({ env: { CAPTURE_LEDGER_OPENSEARCH_URL: OPENSEARCH_URL, CAPTURE_LEDGER_OPENSEARCH_INDEX: INDEX } });
let tdb: TestDatabase;
let store: TestStore;
let api: TestApi;
let apiWithout: TestApi;
let search: SearchIndex;
let bucket: string;

async function wacz(pages: [Omit<WaczPage, 'ts'> & { ts?: Date }], bodyBytes = 2000): Promise<Buffer> {
  const when = new Date('2024-05-01T00:00:00Z');
  return oneResponseWacz({
    software: 'capture-ledger search tests',
    created: when,
    pages: [{ ...pages[0], ts: pages[0].ts ?? when }],
    // incompressible: the WARC is gzipped per record, and the size is what the ranged-read test is about
    body: randomBytes(bodyBytes),
  });
}

/** An archive of `crawlId` with its WACZ in the bucket, joined to the crawl through crawl_pages.task_id. */
async function archiveOf(crawlId: string, body: Buffer, opts: { url?: string; provenance?: Record<string, unknown> } = {}): Promise<Archive> {
  const url = opts.url ?? `https://example.test/${randomUUID()}`;
  const row = await insertArchive(tdb.db, { crawlId, bucket, url, body, s3: api.deps.s3 });
  if (opts.provenance)
    await tdb.db
      .updateTable('archives')
      .set({ provenance: JSON.stringify(opts.provenance) })
      .where('id', '=', row.id)
      .execute();
  await tdb.db
    .insertInto('crawl_pages')
    .values({ crawl_id: crawlId, url, depth: 0, host: new URL(url).host, state: 'captured', task_id: row.task_id })
    .execute();
  return row;
}

const ids: Record<string, string> = {};
let acmeCrawl: string;
let globexCrawl: string;

/** The real client, with the byte size of every bulk request the indexer hands it recorded on the way through. */
function measuringBulks(): { client: SearchIndex['client']; sent: number[] } {
  const sent: number[] = [];
  const client = new Proxy(search.client, {
    get(target, prop, receiver) {
      if (prop !== 'bulk') return Reflect.get(target, prop, receiver);
      return (params: { body: string }) => {
        sent.push(Buffer.byteLength(params.body));
        return target.bulk(params as never);
      };
    },
  });
  return { client, sent };
}

/** Archive rows out of the ledger again, so the tests after this one do not count them. */
async function deleteArchives(archiveIds: string[]): Promise<void> {
  await tdb.db.deleteFrom('archives').where('id', 'in', archiveIds).execute();
}

/** Archives out of the index (each one's first page document) and then out of the ledger. */
async function unindexArchives(archiveIds: string[]): Promise<void> {
  const removed = await search.client.bulk({ body: archiveIds.map((id) => ({ delete: { _index: INDEX, _id: `${id}:0` } })) as never, refresh: true });
  expect(removed.body.errors).toBe(false);
  await deleteArchives(archiveIds);
}

async function indexErrorOf(archiveId: string): Promise<string | null> {
  return (await tdb.db.selectFrom('archives').select('index_error').where('id', '=', archiveId).executeTakeFirstOrThrow()).index_error;
}

async function postIndex(crawlId: string, headers: Record<string, string>, target = api): Promise<Response> {
  return fetch(`${target.url}/api/crawls/${crawlId}/index`, { method: 'POST', headers });
}

async function searchAs(
  q: string,
  headers: Record<string, string>,
  extra = '',
): Promise<{ status: number; body: { hits: Record<string, unknown>[]; total: number } }> {
  const res = await fetch(`${api.url}/api/search?q=${encodeURIComponent(q)}${extra}`, { headers });
  return { status: res.status, body: (await res.json()) as never };
}

const alice = devHeaders('alice', ['acme']);
const carol = devHeaders('carol', ['acme']);
const bob = devHeaders('bob', ['globex']);
const mallory = devHeaders('mallory');

beforeAll(async () => {
  ({ tdb, store, api } = harness);
  apiWithout = await harness.startApi({ identity: 'dev', env: { CAPTURE_LEDGER_OPENSEARCH_URL: '' } });
  expect(api.config.opensearch?.index).toBe(INDEX);
  expect(apiWithout.config.opensearch).toBeUndefined();
  search = createSearchIndex(api.config.opensearch!);
  bucket = api.config.s3.bucket;

  acmeCrawl = await insertJob(tdb.db, { orgId: 'acme', submittedBy: 'alice' });
  globexCrawl = await insertJob(tdb.db, { orgId: 'globex', submittedBy: 'bob' });
  ids.english = (
    await archiveOf(
      acmeCrawl,
      await wacz([{ url: 'https://example.test/responsive', title: 'Layouts that adapt', text: 'A responsive grid adapts to every viewport width.' }]),
    )
  ).id;
  ids.japanese = (
    await archiveOf(acmeCrawl, await wacz([{ url: 'https://example.jp/yakei', title: '東京の夜', text: '東京タワーの夜景はとても綺麗でした。' }]))
  ).id;
  // withheld as the manifest said (provenance), the page line itself silent
  ids.withheld = (
    await archiveOf(acmeCrawl, await wacz([{ url: 'https://example.test/withheld', title: 'Quokka withheld', text: '' }]), {
      provenance: { documentWithheld: 'url-policy' },
    })
  ).id;
  // withheld as the page line says
  ids.withheldLine = (
    await archiveOf(acmeCrawl, await wacz([{ url: 'https://example.test/denied', title: 'Wombat denied', text: '', textWithheld: 'deny' }]))
  ).id;
  ids.empty = (await archiveOf(acmeCrawl, await wacz([{ url: 'https://example.test/empty', title: 'Quokka empty', text: '' }]))).id;
  ids.globex = (
    await archiveOf(globexCrawl, await wacz([{ url: 'https://globex.test/secret', title: 'Globex plans', text: 'Our responsive strategy for next year.' }]))
  ).id;
  await drain(tdb.db, store.client);
  await store.client.write({
    writes: [
      { user: 'user:alice', relation: 'submitter', object: 'organization:acme' },
      { user: 'user:bob', relation: 'submitter', object: 'organization:globex' },
    ],
  });
});

afterAll(async () => {
  await search?.client.indices.delete({ index: INDEX }, { ignore: [404] });
  await search?.client.close();
});

describe('without CAPTURE_LEDGER_OPENSEARCH_URL', () => {
  it('serves neither route (404), even to a caller who could use them', async () => {
    const post = await postIndex(acmeCrawl, alice, apiWithout);
    expect(post.status).toBe(404);
    const get = await fetch(`${apiWithout.url}/api/search?q=responsive`, { headers: alice });
    expect(get.status).toBe(404);
  });

  it('the activity does nothing', async () => {
    const acts = createIndexActivities({ db: tdb.db, s3: api.deps.s3, search: undefined });
    expect(await acts.indexCrawl(acmeCrawl)).toEqual({ indexed: 0, pages: 0, failed: 0 });
    const marked = await tdb.db.selectFrom('archives').select('id').where('indexed_at', 'is not', null).execute();
    expect(marked).toEqual([]);
  });
});

describe('before anything is indexed', () => {
  it('a search answers no hits rather than an error', async () => {
    expect(await searchAs('responsive', alice)).toEqual({ status: 200, body: { hits: [], total: 0 } });
  });
});

describe('POST /api/crawls/:id/index', () => {
  it('is 401 without an identity, 404 for an unknown crawl, 404 without can_submit on its org, 400 for a bad id', async () => {
    expect((await postIndex(acmeCrawl, {})).status).toBe(401);
    expect((await postIndex(randomUUID(), alice)).status).toBe(404);
    const denied = await postIndex(acmeCrawl, carol); // a member, not a submitter
    expect(denied.status).toBe(404);
    expect(await denied.json()).toEqual({ error: 'not found' });
    expect((await postIndex(acmeCrawl, bob)).status).toBe(404);
    expect((await postIndex('not-a-uuid', alice)).status).toBe(400);
    const withBody = await fetch(`${api.url}/api/crawls/${acmeCrawl}/index`, {
      method: 'POST',
      headers: { ...alice, 'content-type': 'application/json' },
      body: '{"all":true}',
    });
    expect(withBody.status).toBe(400);
    const marked = await tdb.db.selectFrom('archives').select('id').where('indexed_at', 'is not', null).execute();
    expect(marked).toEqual([]);
  });

  it("indexes the crawl's archives, sets indexed_at on them only, and answers 202 {indexed, pages}", async () => {
    const res = await postIndex(acmeCrawl, alice);
    expect(res.status).toBe(202);
    expect(await res.json()).toEqual({ indexed: 5, pages: 5, failed: 0 });
    const rows = await tdb.db.selectFrom('archives').select(['id', 'indexed_at']).execute();
    const indexed = new Set(rows.filter((r) => r.indexed_at !== null).map((r) => r.id));
    expect(indexed).toEqual(new Set([ids.english, ids.japanese, ids.withheld, ids.withheldLine, ids.empty]));
    const count = await search.client.count({ index: INDEX });
    expect(count.body.count).toBe(5);
  });

  it('indexes only what is not indexed yet: a second call does nothing', async () => {
    const res = await postIndex(acmeCrawl, alice);
    expect(res.status).toBe(202);
    expect(await res.json()).toEqual({ indexed: 0, pages: 0, failed: 0 });
  });

  it("another organization's submitter indexes their own crawl", async () => {
    const res = await postIndex(globexCrawl, bob);
    expect(res.status).toBe(202);
    expect(await res.json()).toEqual({ indexed: 1, pages: 1, failed: 0 });
  });
});

describe('GET /api/search', () => {
  it('finds an English page by a word of its text', async () => {
    const { status, body } = await searchAs('viewport', alice);
    expect(status).toBe(200);
    expect(body.total).toBe(1);
    expect(body.hits).toHaveLength(1);
    expect(body.hits[0]).toMatchObject({ archiveId: ids.english, url: 'https://example.test/responsive', title: 'Layouts that adapt' });
    expect(body.hits[0]!.capturedAt).toEqual(expect.any(String));
    expect(body.hits[0]!.objectKey).toEqual(expect.stringMatching(/\.wacz$/));
    expect(body.hits[0]!.snippet).toContain('viewport');
    expect(body.hits[0]).not.toHaveProperty('textWithheld');
  });

  it('finds a Japanese page by words of its text (cjk bigrams), and not by words it lacks', async () => {
    for (const q of ['東京タワー', '夜景', 'タワー', '綺麗']) {
      const { body } = await searchAs(q, alice);
      expect(
        body.hits.map((h) => h.archiveId),
        q,
      ).toEqual([ids.japanese]);
      expect(body.hits[0]!.title).toBe('東京の夜');
    }
    for (const q of ['大阪', '京都タワー']) {
      const { body } = await searchAs(q, alice);
      expect(body, q).toEqual({ hits: [], total: 0 });
    }
  });

  it('shows a caller only the hits they may view; total is the raw count', async () => {
    const a = await searchAs('responsive', alice);
    expect(a.body.total).toBe(2);
    expect(a.body.hits.map((h) => h.archiveId)).toEqual([ids.english]);
    const b = await searchAs('responsive', bob);
    expect(b.body.total).toBe(2);
    expect(b.body.hits.map((h) => h.archiveId)).toEqual([ids.globex]);
    const m = await searchAs('responsive', mallory);
    expect(m.body).toEqual({ hits: [], total: 2 });
  });

  it('a share reaches the search: a viewer tuple makes the hit appear', async () => {
    await store.client.write({
      writes: [
        {
          user: 'user:mallory',
          relation: 'viewer',
          object: `archive:${ids.globex}`,
          condition: { name: 'non_expired_grant', context: { grant_time: new Date().toISOString(), grant_duration: '1h' } },
        },
      ],
    });
    const m = await searchAs('responsive', mallory);
    expect(m.body.hits.map((h) => h.archiveId)).toEqual([ids.globex]);
  });

  it('keeps a withheld text apart from an empty one', async () => {
    const { body } = await searchAs('quokka', alice);
    expect(body.total).toBe(2);
    const byId = new Map(body.hits.map((h) => [h.archiveId, h]));
    expect(byId.get(ids.withheld)).toMatchObject({ title: 'Quokka withheld', textWithheld: 'url-policy' });
    expect(byId.get(ids.empty)).toMatchObject({ title: 'Quokka empty' });
    expect(byId.get(ids.empty)).not.toHaveProperty('textWithheld');
    const line = await searchAs('wombat', alice);
    expect(line.body.hits).toEqual([expect.objectContaining({ archiveId: ids.withheldLine, textWithheld: 'deny' })]);
  });

  it('pages with limit and offset', async () => {
    const first = await searchAs('quokka', alice, '&limit=1');
    const second = await searchAs('quokka', alice, '&limit=1&offset=1');
    expect(first.body.hits).toHaveLength(1);
    expect(second.body.hits).toHaveLength(1);
    expect(new Set([first.body.hits[0]!.archiveId, second.body.hits[0]!.archiveId])).toEqual(new Set([ids.withheld, ids.empty]));
  });

  it('checks its query: q required and not blank, limit and offset bounded; 401 without identity', async () => {
    expect((await fetch(`${api.url}/api/search`, { headers: alice })).status).toBe(400);
    expect((await searchAs('   ', alice)).status).toBe(400);
    expect((await searchAs('x', alice, '&limit=0')).status).toBe(400);
    expect((await searchAs('x', alice, '&limit=101')).status).toBe(400);
    expect((await searchAs('x', alice, '&offset=9990&limit=20')).status).toBe(400);
    expect((await searchAs('x', alice, '&unknown=1')).status).toBe(200);
    expect((await searchAs('x', {})).status).toBe(401);
  });

  it('drops a hit whose archive row is gone, though the index still has it', async () => {
    const gone = await archiveOf(acmeCrawl, await wacz([{ url: 'https://example.test/gone', title: 'Ephemeral platypus', text: 'platypus' }]));
    await drain(tdb.db, store.client);
    expect(await (await postIndex(acmeCrawl, alice)).json()).toEqual({ indexed: 1, pages: 1, failed: 0 });
    expect((await searchAs('platypus', alice)).body.hits).toHaveLength(1);
    await tdb.db.deleteFrom('crawl_pages').where('task_id', '=', gone.task_id).execute();
    await tdb.db.deleteFrom('archives').where('id', '=', gone.id).execute();
    expect((await searchAs('platypus', alice)).body).toEqual({ hits: [], total: 1 });
    await search.client.delete({ index: INDEX, id: `${gone.id}:0`, refresh: true });
  });
});

describe('GET /api/search for a caller who sees few of the hits', () => {
  // more than the first ranking read takes (10 × limit, at least 200), so reading on is needed
  const hidden = Array.from({ length: 450 }, () => randomUUID());
  let visible: string[];

  beforeAll(async () => {
    // 450 pages the caller may not view rank first (the word in the title too); five of theirs last
    visible = [ids.english!, ids.japanese!, ids.withheld!, ids.withheldLine!, ids.empty!];
    const body: unknown[] = [];
    for (const id of hidden)
      body.push(
        { index: { _index: INDEX, _id: `${id}:0` } },
        { archiveId: id, position: 0, url: `https://globex.test/${id}`, title: 'okapi okapi', text: 'okapi okapi okapi', capturedAt: '2024-05-01T00:00:00Z' },
      );
    for (const id of visible)
      body.push(
        { index: { _index: INDEX, _id: `${id}:9` } },
        {
          archiveId: id,
          position: 9,
          url: `https://example.test/okapi/${id}`,
          text: 'a lone okapi among many words of plain text',
          capturedAt: '2024-05-01T00:00:00Z',
        },
      );
    const res = await search.client.bulk({ body: body as never, refresh: true });
    expect(res.body.errors).toBe(false);
  });

  afterAll(async () => {
    const docs = [...hidden.map((id) => `${id}:0`), ...visible.map((id) => `${id}:9`)];
    const res = await search.client.bulk({ body: docs.map((id) => ({ delete: { _index: INDEX, _id: id } })) as never, refresh: true });
    expect(res.body.errors).toBe(false);
  });

  it('reads on past the hidden hits until the page is full; total stays the raw count', async () => {
    const r = await searchAs('okapi', alice, '&limit=5');
    expect(r.status).toBe(200);
    expect(r.body.total).toBe(455);
    expect(r.body.hits.map((h) => h.archiveId).sort()).toEqual([...visible].sort());
    expect(r.body).not.toHaveProperty('nextOffset');
    // each hit is shown with its own fields and a snippet of its text, fetched for the page only
    for (const h of r.body.hits) {
      expect(h).toMatchObject({ url: `https://example.test/okapi/${h.archiveId}`, snippet: 'a lone okapi among many words of plain text' });
    }
  });

  it('pages with nextOffset: every visible hit once, none skipped', async () => {
    const seen: string[] = [];
    let extra = '&limit=2';
    for (let pages = 0; pages < 10; pages++) {
      const r = await searchAs('okapi', alice, extra);
      expect(r.status).toBe(200);
      seen.push(...r.body.hits.map((h) => h.archiveId as string));
      const next = (r.body as { nextOffset?: number }).nextOffset;
      if (next === undefined) break;
      expect(next).toBeGreaterThan(hidden.length);
      extra = `&limit=2&offset=${next}`;
    }
    expect(seen.sort()).toEqual([...visible].sort());
  });

  it('a caller who sees none of them gets an empty page after a bounded number of reads', async () => {
    const r = await searchAs('okapi', mallory, '&limit=5');
    expect(r.body.hits).toEqual([]);
    expect(r.body.total).toBe(455);
  });
});

describe('GET /api/search for a caller whose reach is too wide to list', () => {
  // 1,000 shares cut the caller's ListObjects answer, so every hit in the ledger is checked:
  // 120 archives of another organization rank first, then the three shared ones. The checks go
  // out 50 at a time, in the index's order, until the page is full.
  const wide = devHeaders('wide');
  const inLedger = Array.from({ length: 120 }, () => randomUUID());
  const shared = Array.from({ length: 3 }, () => randomUUID());

  beforeAll(async () => {
    const grant = { name: 'non_expired_grant', context: { grant_time: new Date().toISOString(), grant_duration: '1h' } };
    const sharedIds = [...shared, ...Array.from({ length: 1000 }, () => randomUUID())];
    for (let i = 0; i < sharedIds.length; i += 100) {
      await store.client.write({
        writes: sharedIds.slice(i, i + 100).map((id) => ({ user: 'user:wide', relation: 'viewer', object: `archive:${id}`, condition: grant })),
      });
    }
    const when = new Date('2024-05-01T00:00:00Z');
    await tdb.db
      .insertInto('archives')
      .values(
        [...inLedger, ...shared].map((id) => ({
          id,
          task_id: `task-${id}`,
          bucket,
          object_key: `search-tests/${id}.wacz`,
          url: `https://wide.test/${id}`,
          provenance: JSON.stringify({}),
          captured_at: when,
        })),
      )
      .execute();
    const body: unknown[] = [];
    for (const id of inLedger)
      body.push(
        { index: { _index: INDEX, _id: `${id}:0` } },
        {
          archiveId: id,
          position: 0,
          url: `https://wide.test/${id}`,
          title: 'pangolin pangolin',
          text: 'pangolin pangolin pangolin',
          capturedAt: '2024-05-01T00:00:00Z',
        },
      );
    for (const id of shared)
      body.push(
        { index: { _index: INDEX, _id: `${id}:0` } },
        { archiveId: id, position: 0, url: `https://wide.test/${id}`, text: 'one pangolin among many words of plain text', capturedAt: '2024-05-01T00:00:00Z' },
      );
    const res = await search.client.bulk({ body: body as never, refresh: true });
    expect(res.body.errors).toBe(false);
  });

  afterAll(async () => {
    // rows without a WACZ behind them: the indexing tests below would count them as failed
    await unindexArchives([...inLedger, ...shared]);
  });

  it('checks past 50 hidden hits in the ledger and shows the shared ones, with their ledger rows', async () => {
    const r = await searchAs('pangolin', wide, '&limit=3');
    expect(r.status).toBe(200);
    expect(r.body.total).toBe(123);
    expect(r.body.hits.map((h) => h.archiveId).sort()).toEqual([...shared].sort());
    for (const h of r.body.hits) expect(h).toMatchObject({ objectKey: `search-tests/${h.archiveId}.wacz`, capturedAt: '2024-05-01T00:00:00.000Z' });
  });
});

describe('indexing', () => {
  it('reads pages.jsonl with ranged requests, never the whole WACZ', async () => {
    const big = await wacz([{ url: 'https://example.test/big', title: 'Big', text: 'big page' }], 3 * 1024 * 1024);
    const key = `test/search/${randomUUID()}.wacz`;
    await api.deps.s3.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: big }));
    const src = s3RangeSource(api.deps.s3, bucket, key);
    const bytes = await readZipEntry(src, PAGES_ENTRY);
    expect(bytes?.toString('utf8')).toContain('"big page"');
    // the tail read (DEFAULT_TAIL_BYTES) and at most two more; the 3 MiB WARC is never fetched
    expect(src.requests).toBeLessThanOrEqual(3);
    expect(src.bytesRead).toBeLessThanOrEqual(DEFAULT_TAIL_BYTES + 8 * 1024);
    expect(big.length).toBeGreaterThan(3 * 1024 * 1024);
    expect((await readArchivePages(api.deps.s3, bucket, key)).pages).toEqual([
      expect.objectContaining({ url: 'https://example.test/big', title: 'Big', text: 'big page' }),
    ]);
  });

  it('marks an archive it cannot read with its reason, never searchable, and indexes the rest', async () => {
    const crawl = await insertJob(tdb.db, { orgId: 'acme', submittedBy: 'alice' });
    const bad = await archiveOf(crawl, Buffer.from('this is not a zip file at all'));
    const good = await archiveOf(crawl, await wacz([{ url: 'https://example.test/fine', title: 'Fine', text: 'numbat' }]));
    await drain(tdb.db, store.client);
    const res = await postIndex(crawl, alice);
    expect(res.status).toBe(202);
    expect(await res.json()).toEqual({ indexed: 1, pages: 1, failed: 1 });
    const rows = await tdb.db.selectFrom('archives').selectAll().where('id', 'in', [bad.id, good.id]).execute();
    const [badRow, goodRow] = [bad, good].map((a) => rows.find((r) => r.id === a.id)!);
    // the archive itself is the cause: marked (indexed_at, so a rebuild takes it again) with why,
    // and not read again; the ledger's view says it is not indexed
    expect([badRow!.indexed_at, badRow!.index_error]).toEqual([expect.any(Date), 'not a zip file: no end of central directory']);
    expect([goodRow!.indexed_at, goodRow!.index_error]).toEqual([expect.any(Date), null]);
    expect([archiveView(badRow!).indexedAt, archiveView(goodRow!).indexedAt]).toEqual([null, goodRow!.indexed_at!.toISOString()]);
    expect(await (await postIndex(crawl, alice)).json()).toEqual({ indexed: 0, pages: 0, failed: 0 });
    // remove it again so the rebuild below counts only well-formed archives
    await tdb.db.deleteFrom('archives').where('id', '=', bad.id).execute();
  });

  it(
    'a crawl with two pages of 60 MiB of text: the others are searchable, the two carry their reason, and no later run fails on them',
    { timeout: 120_000 },
    async () => {
      // acme's crawl of the file: a new one would be outside alice's reach as OpenFGA cached it (10 s)
      const crawl = acmeCrawl;
      // as another capturer (or this one before its cap) wrote them: the text whole in pages.jsonl
      const huge = await Promise.all(
        [0, 1].map(async (i) =>
          archiveOf(crawl, await wacz([{ url: `https://example.test/huge${i}`, title: 'Huge', text: `bilby ${'okapi '.repeat(HUGE_TEXT / 6)}` }])),
        ),
      );
      const fine = await Promise.all(
        ['quokka', 'dugong', 'kowari'].map(async (w) =>
          archiveOf(crawl, await wacz([{ url: `https://example.test/${w}`, title: w, text: `a ${w} and a bilby` }])),
        ),
      );
      await drain(tdb.db, store.client);
      const res = await postIndex(crawl, alice);
      expect(res.status).toBe(202);
      expect(await res.json()).toEqual({ indexed: 3, pages: 3, failed: 2 });
      for (const a of huge) expect(await indexErrorOf(a.id)).toMatch(/^pages\/pages\.jsonl is 629\d{5} bytes, more than the 8388608 allowed$/);
      expect(MAX_PAGES_JSONL_BYTES).toBe(8388608);
      for (const a of fine) expect(await indexErrorOf(a.id)).toBeNull();
      const found = await searchAs('bilby', alice);
      expect(found.body.hits.map((h) => h.archiveId).sort()).toEqual(fine.map((a) => a.id).sort());
      expect(found.body.total).toBe(3);
      // neither the crawl's indexing nor the pending one reads them again
      expect(await (await postIndex(crawl, alice)).json()).toEqual({ indexed: 0, pages: 0, failed: 0 });
      const acts = createIndexActivities({ db: tdb.db, s3: api.deps.s3, search });
      expect((await acts.indexPending()).failed).toBe(0);
      // out again: the rebuild below counts every archive it finds
      await deleteArchives(huge.map((a) => a.id));
    },
  );

  it('bulk requests are bounded by bytes: 30 archives of a 1 MB page go out in requests of at most MAX_BULK_BYTES', { timeout: 120_000 }, async () => {
    // acme's crawl of the file: a new one would be outside alice's reach as OpenFGA cached it (10 s)
    const crawl = acmeCrawl;
    const page = (i: number): string => `numbat${i} ${'marsupial '.repeat(MAX_PAGE_TEXT_BYTES / 10 - 2)}`;
    const rows = await Promise.all(
      Array.from({ length: 30 }, async (_, i) => archiveOf(crawl, await wacz([{ url: `https://example.test/bulk${i}`, title: `Bulk ${i}`, text: page(i) }]))),
    );
    const { client, sent } = measuringBulks();
    const result = await indexCrawl({ db: tdb.db, s3: api.deps.s3, search: { client, index: INDEX } }, crawl);
    expect(result).toEqual({ indexed: 30, pages: 30, failed: 0 });
    expect(sent.reduce((a, b) => a + b, 0)).toBeGreaterThan(30 * MAX_PAGE_TEXT_BYTES);
    expect(Math.max(...sent)).toBeLessThanOrEqual(MAX_BULK_BYTES);
    expect(sent.length).toBe(4);
    await drain(tdb.db, store.client);
    expect((await searchAs('numbat17', alice)).body.hits.map((h) => h.archiveId)).toEqual([rows[17]!.id]);
    // out again: the rebuild below need not index 30 MB
    await unindexArchives(rows.map((r) => r.id));
  });

  it(
    'a bulk request the node refuses whole (413 over 100 MB, 429 over its indexing pressure limit) is split until it goes through',
    { timeout: 120_000 },
    async () => {
      const crawl = acmeCrawl;
      // control characters: 6 bytes of JSON each, and no tokens, so 108 MB of requests cost little to index
      const rows = await Promise.all(
        Array.from({ length: 18 }, async (_, i) =>
          archiveOf(
            crawl,
            await wacz([{ url: `https://example.test/escaped${i}`, title: `Escaped ${i}`, text: `kiwi${i} ${'\u0001'.repeat(MAX_PAGE_TEXT_BYTES - 10)}` }]),
          ),
        ),
      );
      const { client, sent } = measuringBulks();
      // a byte bound above the node's http.max_content_length (100 MB), as a deployment could set it
      const result = await indexCrawl(
        { db: tdb.db, s3: api.deps.s3, search: { client, index: INDEX }, bulk: { maxBytes: 128 * 1024 * 1024, maxDocs: 1000 } },
        crawl,
      );
      expect(result).toEqual({ indexed: 18, pages: 18, failed: 0 });
      // refused at 108 MB (413), then halves of 54 MB (429 on this stack's node, whose limit is
      // 51 MB), then quarters of 27 MB taken: depth first, 7 requests (more if other bulks pressed)
      expect(sent[0]).toBeGreaterThan(100 * 1024 * 1024);
      expect(sent.length).toBeGreaterThanOrEqual(3);
      for (const n of sent.slice(1)) expect(n).toBeLessThan(0.51 * sent[0]!);
      expect(sent[1]! + sent.find((n, i) => i > 1 && n > 0.45 * sent[0]!)!).toBe(sent[0]);
      await drain(tdb.db, store.client);
      expect((await searchAs('kiwi11', alice)).body.hits.map((h) => h.archiveId)).toEqual([rows[11]!.id]);
      await unindexArchives(rows.map((r) => r.id));
    },
  );

  it('text past the cap in a WACZ from elsewhere is indexed cut to the cap: found by its first words, not by its last', async () => {
    // acme's crawl of the file: a new one would be outside alice's reach as OpenFGA cached it (10 s)
    const crawl = acmeCrawl;
    const long = await archiveOf(
      crawl,
      await wacz([{ url: 'https://example.test/long', title: 'Long', text: `wallaby ${'filler '.repeat((3 * MAX_PAGE_TEXT_BYTES) / 7)} quoll` }]),
    );
    await drain(tdb.db, store.client);
    expect(await (await postIndex(crawl, alice)).json()).toEqual({ indexed: 1, pages: 1, failed: 0 });
    expect((await searchAs('wallaby', alice)).body.hits.map((h) => h.archiveId)).toEqual([long.id]);
    expect((await searchAs('quoll', alice)).body).toEqual({ hits: [], total: 0 });
    const stored = await search.client.get({ index: INDEX, id: `${long.id}:0`, _source_includes: ['text'] });
    expect(Buffer.byteLength((stored.body._source as { text: string }).text)).toBeLessThanOrEqual(MAX_PAGE_TEXT_BYTES);
  });

  it('rebuilds everything from one statement: UPDATE archives SET indexed_at = NULL', { timeout: 120_000 }, async () => {
    const before = await tdb.db
      .selectFrom('archives')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('indexed_at', 'is not', null)
      .executeTakeFirstOrThrow();
    // the index itself is gone (a mapping change would do this), and only the column says so
    await search.client.indices.delete({ index: INDEX });
    forgetIndex(search);
    // one archive as an indexer leaves one a page of which the old mapping refused: marked, with why
    await tdb.db
      .updateTable('archives')
      .set({ index_error: 'OpenSearch refused page 0: mapper_parsing_exception: failed to parse field [text]' })
      .where('id', '=', ids.japanese!)
      .execute();
    await sql`UPDATE archives SET indexed_at = NULL`.execute(tdb.db);
    // what the worker's search-index schedule runs: the indexPending workflow on a real worker
    const config = { ...api.config, temporal: { ...api.config.temporal, taskQueue: uniqueTaskQueue('search-rebuild') } };
    const worker = await startTestWorker({ config, db: tdb.db, fga: store.client });
    let result: unknown;
    try {
      result = await worker.client.workflow.execute('indexPending', {
        taskQueue: config.temporal.taskQueue,
        workflowId: `index-pending-${randomUUID()}`,
        args: [],
      });
    } finally {
      await worker.stop();
    }
    expect(result).toEqual({ indexed: Number(before.n), pages: Number(before.n), failed: 0 });
    const acts = createIndexActivities({ db: tdb.db, s3: api.deps.s3, search });
    const unindexed = await tdb.db.selectFrom('archives').select('id').where('indexed_at', 'is', null).execute();
    expect(unindexed).toEqual([]);
    expect((await search.client.count({ index: INDEX })).body.count).toBe(Number(before.n));
    // the marked one too: indexed under the new mapping, its reason gone
    expect((await searchAs('東京タワー', alice)).body.hits.map((h) => h.archiveId)).toEqual([ids.japanese]);
    expect(await indexErrorOf(ids.japanese!)).toBeNull();
    expect((await searchAs('responsive', bob)).body.hits.map((h) => h.archiveId)).toEqual([ids.globex]);
    // and the crawl activity finds nothing left to do
    expect(await acts.indexCrawl(acmeCrawl)).toEqual({ indexed: 0, pages: 0, failed: 0 });
  });

  it('npm run search:index indexes what is unindexed', async () => {
    await tdb.db.updateTable('archives').set({ indexed_at: null }).where('id', '=', ids.japanese!).execute();
    const { stdout } = await execFileAsync(process.execPath, ['src/cli/search-index.ts'], {
      cwd: ROOT,
      env: {
        ...process.env,
        CAPTURE_LEDGER_DATABASE_URL: tdb.url,
        CAPTURE_LEDGER_FGA_STORE_ID: store.storeId,
        CAPTURE_LEDGER_FGA_MODEL_ID: store.modelId,
        CAPTURE_LEDGER_OPENSEARCH_URL: OPENSEARCH_URL,
        CAPTURE_LEDGER_OPENSEARCH_INDEX: INDEX,
      },
    });
    expect(stdout).toMatch(new RegExp(`^indexed 1 archives \\(1 pages\\) into ${INDEX} in [\\d.]+ s; failed 0$`, 'm'));
    const row = await tdb.db.selectFrom('archives').select('indexed_at').where('id', '=', ids.japanese!).executeTakeFirstOrThrow();
    expect(row.indexed_at).not.toBeNull();
  });
});
