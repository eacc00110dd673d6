// Search within a caller's reach: the index is asked only for the crawls (and shares) OpenFGA lists
// for the caller, and a hit is shown only when its archive is of such a crawl and OpenFGA holds its
// parent tuple (none of it left in the outbox), as can_view would have it; the index never decides. Rows and tuples in a test database
// and OpenFGA store, documents (as the indexer writes them, crawlId included) in an index of this
// file's own.
import { randomBytes, randomUUID } from 'node:crypto';
import { ConsistencyPreference } from '@openfga/sdk';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { checkEndpointOf } from '../../src/fga/check.ts';
import { createSearchIndex, type SearchIndex } from '../../src/search/client.ts';
import { ensureIndex, INDEX_MAPPINGS, INDEX_SETTINGS, type PageDocument } from '../../src/search/schema.ts';
import { devHeaders, startTestApi, type TestApi } from '../support/api.ts';
import { createTestDatabase, type TestDatabase } from '../support/db.ts';
import { checkQuestion, createTestStore, type TestStore } from '../support/fga.ts';
import { drain, insertArchive, insertJob } from '../support/ledger.ts';

const INDEX = `cl-test-search-reach-${randomBytes(4).toString('hex')}`;
const OPENSEARCH_URL = 'http://127.0.0.1:9200';

let tdb: TestDatabase;
let store: TestStore;
let api: TestApi;
let search: SearchIndex;
const alice = devHeaders('alice', ['acme']);

const visible: string[] = [];
const others: string[] = [];
let refused: string;

async function archivesOf(crawlId: string, n: number): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < n; i++) ids.push((await insertArchive(tdb.db, { crawlId, bucket: api.config.s3.bucket, url: `https://reach.test/${randomUUID()}` })).id);
  return ids;
}

const doc = (archiveId: string, crawlId: string, text: string): PageDocument => ({
  archiveId,
  crawlId,
  position: 0,
  url: `https://reach.test/${archiveId}`,
  text,
  capturedAt: '2024-05-01T00:00:00Z',
});

async function searchAs(q: string, extra = ''): Promise<{ hits: { archiveId: string; objectKey: string }[]; total: number; nextOffset?: number }> {
  const res = await fetch(`${api.url}/api/search?q=${encodeURIComponent(q)}${extra}`, { headers: alice });
  expect(res.status).toBe(200);
  return (await res.json()) as never;
}

/** can_view as signing asks it: alice with her organization, at OpenFGA's strongest consistency */
async function aliceMayView(archiveId: string): Promise<boolean> {
  const question = checkQuestion('alice', 'can_view', `archive:${archiveId}`, ['acme'], new Date().toISOString());
  const answer = await store.client.check(question, { consistency: ConsistencyPreference.HigherConsistency });
  return answer.allowed === true;
}

beforeAll(async () => {
  tdb = await createTestDatabase();
  store = await createTestStore();
  api = await startTestApi({ tdb, store, identity: 'dev', env: { CAPTURE_LEDGER_OPENSEARCH_URL: OPENSEARCH_URL, CAPTURE_LEDGER_OPENSEARCH_INDEX: INDEX } });
  search = createSearchIndex(api.config.opensearch!);
  const acme = await insertJob(tdb.db, { orgId: 'acme', submittedBy: 'bob' });
  const globex = await insertJob(tdb.db, { orgId: 'globex', submittedBy: 'bob' });
  visible.push(...(await archivesOf(acme, 25)));
  others.push(...(await archivesOf(globex, 100)));
  await drain(tdb.db, store.client);
  // of alice's crawl in the ledger and in the index, but its parent tuple has not reached OpenFGA yet
  refused = (await archivesOf(acme, 1))[0]!;
  await ensureIndex(search);
  const body: unknown[] = [];
  // the other organization's pages rank first (the word twice), alice's after them
  for (const id of others) body.push({ index: { _index: INDEX, _id: `${id}:0` } }, doc(id, globex, 'kakapo kakapo'));
  for (const id of [refused, ...visible]) body.push({ index: { _index: INDEX, _id: `${id}:0` } }, doc(id, acme, 'one kakapo among many other words'));
  const res = await search.client.bulk({ body: body as never, refresh: true });
  expect(res.body.errors).toBe(false);
});

afterAll(async () => {
  await search?.client.indices.delete({ index: INDEX }, { ignore: [404] });
  await search?.client.close();
  await api?.close();
  await tdb?.drop();
});

describe('GET /api/search within the reach', () => {
  it('shows only pages of the crawls OpenFGA lists for the caller, and of those only what OpenFGA holds the parent of; total is the raw count', async () => {
    const endpoint = checkEndpointOf(api.deps.fga)!;
    const spies = [vi.spyOn(endpoint, 'batchCheckCached'), vi.spyOn(endpoint, 'decide'), vi.spyOn(api.deps.fga, 'batchCheck'), vi.spyOn(api.deps.fga, 'check')];
    let r: Awaited<ReturnType<typeof searchAs>>;
    try {
      r = await searchAs('kakapo', '&limit=100');
      // the reached crawls are OpenFGA's answer: no hit is asked about again
      for (const spy of spies) expect(spy).not.toHaveBeenCalled();
    } finally {
      for (const spy of spies) spy.mockRestore();
    }
    expect(r.total).toBe(126);
    expect(r.hits.map((h) => h.archiveId).sort()).toEqual([...visible].sort());
    expect(r.hits.map((h) => h.archiveId)).not.toContain(refused);
    // OpenFGA, asked of every hit shown and at its strongest, agrees; and refuses the one left out
    expect(await Promise.all(r.hits.map((h) => aliceMayView(h.archiveId)))).toEqual(visible.map(() => true));
    expect(await aliceMayView(refused)).toBe(false);
    expect(r).not.toHaveProperty('nextOffset');
    for (const h of r.hits) expect(h.objectKey).toMatch(/\.wacz$/);
  });

  it('pages with nextOffset: every visible hit once, full pages until the last', async () => {
    const pages: string[][] = [];
    let extra = '&limit=10';
    for (let i = 0; i < 10; i++) {
      const r = await searchAs('kakapo', extra);
      expect(r.total).toBe(126);
      pages.push(r.hits.map((h) => h.archiveId));
      if (r.nextOffset === undefined) break;
      extra = `&limit=10&offset=${r.nextOffset}`;
    }
    expect(pages.map((p) => p.length)).toEqual([10, 10, 5]);
    const seen = pages.flat();
    expect(new Set(seen).size).toBe(seen.length);
    expect(seen.sort()).toEqual([...visible].sort());
  });

  it('a caller who reaches nothing gets the raw count and no hits', async () => {
    const res = await fetch(`${api.url}/api/search?q=kakapo`, { headers: devHeaders('nobody', ['initech']) });
    expect(await res.json()).toEqual({ hits: [], total: 126 });
  });

  it('the archive whose parent tuple was waiting in the outbox is shown once OpenFGA has it, as a check would allow it then', async () => {
    expect(await aliceMayView(refused)).toBe(false);
    expect(await drain(tdb.db, store.client)).toBe(1);
    expect(await aliceMayView(refused)).toBe(true);
    const r = await searchAs('kakapo', '&limit=100');
    expect(r.hits.map((h) => h.archiveId).sort()).toEqual([refused, ...visible].sort());
  });
});

describe('an index made before crawlId', () => {
  it('gains the field, so documents carrying it are accepted', async () => {
    const old = createSearchIndex({ url: OPENSEARCH_URL, index: `${INDEX}-old` });
    try {
      const { crawlId: _dropped, ...properties } = INDEX_MAPPINGS.properties;
      await old.client.indices.create({ index: old.index, body: { settings: INDEX_SETTINGS, mappings: { ...INDEX_MAPPINGS, properties } } as never });
      await ensureIndex(old);
      const mapping = await old.client.indices.getMapping({ index: old.index });
      expect((mapping.body as Record<string, { mappings: { properties: Record<string, unknown> } }>)[old.index]!.mappings.properties.crawlId).toEqual({
        type: 'keyword',
      });
      const id = randomUUID();
      const put = await old.client.index({ index: old.index, id: `${id}:0`, body: doc(id, randomUUID(), 'kea') as never, refresh: true });
      expect(put.body.result).toBe('created');
    } finally {
      await old.client.indices.delete({ index: old.index }, { ignore: [404] });
      await old.client.close();
    }
  });
});
