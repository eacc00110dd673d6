// Benchmark: full-text search (issues 8 and 14). 10,000 pages (and a second point at 100,000),
// one WACZ each, spread over 10 organizations' crawls, really in the bucket; indexed through the
// real indexer (ranged reads of pages/pages.jsonl, bulk writes, indexed_at), then queried the way
// GET /api/search does it (searchForCaller: the caller's reach from OpenFGA, a filtered
// OpenSearch read, the ledger rows of what it read within that reach, reading on when the page is
// not full; can_view is asked only of a reach too wide to list). The caller belongs to one of ten organizations, so nine pages in ten are not theirs.
// Beside it, OpenSearch alone (one read of a page of hits with fields and snippets, unfiltered),
// measured in the same run (ratio); how often the page held every visible hit that exists, up to
// the limit (fullPageRate); and what each phase of the search cost (phases: mean ms per query).
// Goals: a full page of visible hits whenever they exist, query p50 ≤ 50 ms (issue 14), and p50
// at most 2.5 × OpenSearch alone (issue 28).
//
//   node bench/search.ts            (or through npm run bench)
//   → {"bench":"search-index","pages":10000,"seconds":…,"pagesPerSecond":…}
//   → {"bench":"search-query","queries":…,"p50Ms":…,"p99Ms":…,"ratioP50":…,"fullPageRate":1,"phases":{…},"met":true,…}
import { randomBytes, randomUUID } from 'node:crypto';
import { pathToFileURL } from 'node:url';
import { PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { ClientWriteRequestOnDuplicateWrites, type OpenFgaClient } from '@openfga/sdk';
import { mapLimit } from '../src/domain/map-limit.ts';
import { writeWacz } from '../src/domain/wacz/write.ts';
import { archiveTuples, jobTuples, type Tuple } from '../src/fga/tuples.ts';
import { createS3 } from '../src/s3/client.ts';
import { indexPending, pageDocuments, type IndexResult } from '../src/search/indexer.ts';
import type { ParsedPages } from '../src/domain/pages-jsonl.ts';
import { documentId, ensureIndex } from '../src/search/schema.ts';
import { createSearchIndex, type SearchIndex } from '../src/search/client.ts';
import type { Db } from '../src/db/connect.ts';
import type { Identity } from '../src/domain/identity.ts';
import { sql } from 'kysely';
import { searchForCaller, type SearchDeps, type SearchPhase } from '../src/search/caller-search.ts';
import { HIT_FIELDS, matchQuery, queryIndex } from '../src/search/query.ts';
import { createTestStore } from '../test/support/fga.ts';
import { benchConfig, createBenchDatabase, percentile, printLines, type BenchDatabase } from './support-crawl.ts';
import { load1Now, round } from './support-figures.ts';
import { analyzeFgaTuples } from './support-fga-statistics.ts';
import { BENCH_PREFIX, deleteCrawlObjects, deleteLeftovers } from './support-objects.ts';

export interface SearchBenchOptions {
  pages?: number;
  orgs?: number;
  /** measured queries (after a warm-up) */
  queries?: number;
  /** hits asked for per query (the route's default is 20) */
  limit?: number;
  /**
   * Above this many pages the bench writes the documents straight to the index (the same
   * documents the indexer makes, pageDocuments) instead of putting WACZ in the bucket and running
   * the indexer: at 100,000 pages on a loaded 2-core machine that takes over an hour, and the
   * query figures do not depend on how the documents got there. Default 10,000.
   */
  bulkAbove?: number;
}

/** Where the bench's WACZ are put */
const SEARCH_PREFIX = `${BENCH_PREFIX}search/`;

// A vocabulary with a long tail, so queries range from "in half the pages" to "in a handful".
const COMMON = 'the page site news about more home contact service information search data time people report world city year online update'.split(' ');
const MEDIUM = 'responsive layout gallery festival harbor museum railway library garden theatre stadium bridge market castle island'.split(' ');
const RARE = 'quokka echidna platypus numbat wombat axolotl pangolin okapi'.split(' ');
const JAPANESE = [
  '東京タワーの夜景',
  '京都の紅葉と寺院',
  '大阪の食べ歩き',
  '北海道の雪まつり',
  '沖縄の青い海',
  '富士山の登山道',
  '横浜の中華街',
  '奈良の鹿と大仏',
];

function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function pageText(rand: () => number): { title: string; text: string } {
  const pick = <T>(xs: T[]): T => xs[Math.floor(rand() * xs.length)]!;
  const words: string[] = [];
  for (let i = 0; i < 150; i++) {
    const r = rand();
    words.push(r < 0.8 ? pick(COMMON) : r < 0.97 ? pick(MEDIUM) : r < 0.985 ? pick(RARE) : pick(JAPANESE));
  }
  return { title: `${pick(MEDIUM)} ${pick(COMMON)} ${pick(JAPANESE)}`, text: words.join(' ') };
}

export async function run(opts: SearchBenchOptions = {}): Promise<Record<string, unknown>[]> {
  await deleteLeftovers();
  const base = opts.pages ?? 10_000;
  const out: Record<string, unknown>[] = [];
  // a second point at 10× the pages, so it is visible how the cost grows
  for (const pages of [base, base * 10]) out.push(...(await measure({ ...opts, pages })));
  return out;
}

/** One point of the bench: its index record and its query record. */
export async function measure(opts: SearchBenchOptions & { pages: number }): Promise<Record<string, unknown>[]> {
  const load1 = load1Now();
  const point = pointOf(opts);
  const stack = await openStack();
  // filled as each crawl is made, so the finally clears what a seeding that failed half-way put in the bucket
  const crawlIds: string[] = [];
  try {
    const seeded = await seed(stack, point, crawlIds);
    const indexing = await indexAll(stack, seeded);
    const querying = await queryAsMember(stack, point, seeded.rows, crawlIds[0]);
    return [indexRecord(point, load1, seeded, indexing), queryRecord(point, load1, indexing.count, querying)];
  } finally {
    await closeStack(stack, crawlIds);
  }
}

/** A point's sizes, the options' defaults filled in. */
interface Point {
  pages: number;
  orgs: number;
  queries: number;
  limit: number;
  bulkAbove: number;
}

function pointOf(opts: SearchBenchOptions & { pages: number }): Point {
  return { pages: opts.pages, orgs: opts.orgs ?? 10, queries: opts.queries ?? 300, limit: opts.limit ?? 20, bulkAbove: opts.bulkAbove ?? 10_000 };
}

/** What one point runs against: a search index, a database and an OpenFGA store of its own, and the bucket. */
interface Stack {
  index: string;
  search: SearchIndex;
  s3: S3Client;
  bucket: string;
  bench: BenchDatabase;
  fga: OpenFgaClient;
}

async function openStack(): Promise<Stack> {
  const index = `cl-bench-search-${randomBytes(4).toString('hex')}`;
  const config = benchConfig({ CAPTURE_LEDGER_OPENSEARCH_INDEX: index });
  const bench = await createBenchDatabase(config.databaseUrl);
  try {
    // an OpenFGA store of its own with the project's model
    const store = await createTestStore();
    const search = createSearchIndex({ url: config.opensearch?.url ?? 'http://127.0.0.1:9200', index });
    return { index, search, s3: createS3(config.s3), bucket: config.s3.bucket, bench, fga: store.client };
  } catch (err) {
    // nothing else was made yet: the database is the one thing to take back
    await bench.drop();
    throw err;
  }
}

/** Everything the point made goes again: its objects, its index, its OpenFGA store, its database. */
async function closeStack(stack: Stack, crawlIds: string[]): Promise<void> {
  const { search, s3, fga } = stack;
  await deleteCrawlObjects(s3, stack.bucket, crawlIds, SEARCH_PREFIX).catch((err: unknown) => console.error('bench objects left in the bucket:', err));
  await search.client.indices.delete({ index: stack.index }, { ignore: [404] }).catch(() => undefined);
  await search.client.close();
  await fga.deleteStore().catch(() => undefined);
  await stack.bench.drop();
  s3.destroy();
}

/** One seeded archive of one page: its WACZ's key in the bucket (size 0 when none was put there). */
interface SeededArchive {
  id: string;
  crawlId: string;
  url: string;
  key: string;
  size: number;
}

interface Seeded {
  /** each archive's page, by position */
  texts: { title: string; text: string }[];
  when: Date;
  viaIndexer: boolean;
  rows: SeededArchive[];
  seedSeconds: number;
}

/** The crawls, then (timed as seedSeconds) the archives: WACZ in the bucket, their rows, their tuples in OpenFGA. */
async function seed(stack: Stack, point: Point, crawlIds: string[]): Promise<Seeded> {
  // crawls, one per organization, with their capture_job tuples
  const tuples = await createCrawls(stack.bench.db, point, crawlIds);

  // 10,000 WACZ in the bucket, their archive rows, crawl_pages joining them to their crawl
  const rand = prng(42);
  const texts = Array.from({ length: point.pages }, () => pageText(rand));
  const seedT0 = performance.now();
  const when = new Date();
  const viaIndexer = point.pages <= point.bulkAbove;
  const rows = await putArchives(stack, point, texts, crawlIds, when, viaIndexer);
  await insertArchiveRows(stack.bench.db, stack.bucket, rows, crawlIds, when);
  for (const r of rows) tuples.push(...archiveTuples(r.id, r.crawlId));
  await writeTuples(stack.fga, tuples);
  await analyzeFgaTuples();
  const seedSeconds = (performance.now() - seedT0) / 1000;
  return { texts, when, viaIndexer, rows, seedSeconds };
}

/** Each crawl's id is pushed to crawlIds as it is made; the tuples are returned. */
async function createCrawls(db: Db, point: Point, crawlIds: string[]): Promise<Tuple[]> {
  const tuples: Tuple[] = [];
  for (let o = 0; o < point.orgs; o++) {
    const row = await db
      .insertInto('crawls')
      .values({
        org_id: `org${o}`,
        submitted_by: 'bench',
        state: 'succeeded',
        stop_reason: 'max_depth',
        seeds: ['https://bench.test/'],
        rules: JSON.stringify([]),
        max_depth: 0,
        max_pages: point.pages,
        per_host_delay_ms: 0,
        host_parallelism: 1,
        formats: ['wacz'],
        finished_at: new Date(),
      })
      .returning('id')
      .executeTakeFirstOrThrow();
    crawlIds.push(row.id);
    tuples.push(...jobTuples(row.id, 'bench', `org${o}`));
  }
  return tuples;
}

/** One archive a page, its crawl round-robin; its WACZ put in the bucket only when the indexer is to read it. */
async function putArchives(stack: Stack, point: Point, texts: Seeded['texts'], crawlIds: string[], when: Date, viaIndexer: boolean): Promise<SeededArchive[]> {
  return mapLimit(texts, 32, async (t, i) => {
    const id = randomUUID();
    const crawlId = crawlIds[i % point.orgs]!;
    const url = `https://h${i % 50}.bench.test/p/${i}`;
    const key = `${SEARCH_PREFIX}${crawlId}/${id}.wacz`;
    if (!viaIndexer) return { id, crawlId, url, key, size: 0 };
    const wacz = await pageWacz(url, i, t, when);
    await stack.s3.send(new PutObjectCommand({ Bucket: stack.bucket, Key: key, Body: wacz, ContentType: 'application/wacz' }));
    return { id, crawlId, url, key, size: wacz.length };
  });
}

/** A WACZ of one page: the page's text in pages.jsonl and its GET as the one exchange. */
async function pageWacz(url: string, i: number, t: { title: string; text: string }, when: Date): Promise<Buffer> {
  const body = Buffer.from(`<html><body>${t.text}</body></html>`);
  return writeWacz({
    software: 'bench',
    created: when,
    pages: [{ url, title: t.title, text: t.text, ts: when }],
    exchanges: [
      {
        url,
        date: when,
        request: { method: 'GET', target: `/p/${i}`, httpVersion: 'HTTP/1.1', headers: [['Host', new URL(url).host]] },
        response: {
          status: 200,
          statusText: 'OK',
          httpVersion: 'HTTP/1.1',
          headers: [
            ['Content-Type', 'text/html'],
            ['Content-Length', String(body.length)],
          ],
          body,
        },
      },
    ],
  });
}

/** The archives' rows, their crawl_pages and capture_submissions, 1,000 archives a statement. */
async function insertArchiveRows(db: Db, bucket: string, rows: SeededArchive[], crawlIds: string[], when: Date): Promise<void> {
  // crawl i belongs to organization i (createCrawls)
  const orgOf = new Map(crawlIds.map((id, i) => [id, `org${i}`]));
  for (let i = 0; i < rows.length; i += 1000) {
    const chunk = rows.slice(i, i + 1000);
    await db
      .insertInto('archives')
      .values(
        chunk.map((r) => ({
          id: r.id,
          task_id: `task-${r.id}`,
          bucket,
          object_key: r.key,
          url: r.url,
          size: r.size,
          provenance: JSON.stringify({}),
          captured_at: when,
        })),
      )
      .execute();
    await db
      .insertInto('crawl_pages')
      .values(chunk.map((r) => ({ crawl_id: r.crawlId, url: r.url, depth: 0, host: new URL(r.url).host, state: 'captured' as const, task_id: `task-${r.id}` })))
      .execute();
    // what admission writes next to each archive (task -> crawl), which the search's scope reads
    await db
      .insertInto('capture_submissions')
      .values(chunk.map((r) => ({ task_id: `task-${r.id}`, org_id: orgOf.get(r.crawlId)!, submitted_by: 'bench', crawl_id: r.crawlId, url: r.url })))
      .execute();
  }
}

interface Indexing {
  indexed: IndexResult;
  indexSeconds: number;
  /** documents in the index afterwards */
  count: number;
}

/** Every archive indexed, timed, and then the index's document count. */
async function indexAll(stack: Stack, seeded: Seeded): Promise<Indexing> {
  const { search, s3, bench } = stack;
  // indexing: what the workflow and POST /index run, over every archive (or, past bulkAbove,
  // the same documents written straight to the index)
  const t0 = performance.now();
  const indexed = seeded.viaIndexer
    ? await indexPending({ db: bench.db, s3, search })
    : await writeDocuments(
        search,
        bench.db,
        seeded.rows.map((r, i) => ({ ...r, ...seeded.texts[i]! })),
        seeded.when,
      );
  const indexSeconds = (performance.now() - t0) / 1000;
  const count = (await search.client.count({ index: stack.index })).body.count;
  return { indexed, indexSeconds, count };
}

/** What the queries ask: medium and rare words, the start of each Japanese phrase, three phrases. */
const TERMS = [...MEDIUM, ...RARE, ...JAPANESE.map((j) => j.slice(0, 4)), 'responsive layout', 'festival harbor', 'the page'];

/** The terms the queries ask, drawn in the same order every run: the warm-up's first, then the measured queries'. */
function termPicker(): () => string {
  const qrand = prng(7);
  return () => TERMS[Math.floor(qrand() * TERMS.length)]!;
}

interface QueryFigures {
  /** ms of each measured searchForCaller */
  full: number[];
  /** ms of each bare OpenSearch read beside it */
  indexOnly: number[];
  visible: number;
  rawTotal: number;
  fullPages: number;
  phases: Record<string, unknown>;
}

/** A warm-up, then the measured queries, each through searchForCaller and beside it through OpenSearch alone. */
async function queryAsMember(stack: Stack, point: Point, rows: SeededArchive[], ownCrawlId: string | undefined): Promise<QueryFigures> {
  const { bench, fga, search } = stack;
  // querying as a member of one organization
  const identity = { subject: 'reader', organizations: ['org0'] };
  const pickTerm = termPicker();
  for (let i = 0; i < 30; i++) await searchForCaller({ db: bench.db, fga, search }, identity, pickTerm(), { size: point.limit, from: 0 });
  const phases = phaseRecorder();
  const traced: SearchDeps = { db: bench.db, fga, search, trace: phases.trace };
  // how many visible hits each term has in all (the caller's organization is org0, crawl 0)
  const visibleIds = new Set<string>(rows.filter((r) => r.crawlId === ownCrawlId).map((r) => r.id));
  const available = new Map<string, number>();
  for (const term of TERMS) {
    const all = await queryIndex(search, term, { size: 10_000, from: 0, trackTotal: false });
    available.set(term, all.matches.filter((h) => visibleIds.has(h.archiveId)).length);
  }
  const timed = await timeQueries({ stack, point, identity, traced, pickTerm, next: phases.next, available });
  return { ...timed, phases: phases.summary(point.queries) };
}

interface MeasuredQueries {
  stack: Stack;
  point: Point;
  identity: Identity;
  traced: SearchDeps;
  pickTerm: () => string;
  /** ends a query's phase record */
  next: () => void;
  /** visible hits each term has in all */
  available: Map<string, number>;
}

/** Each measured query timed through searchForCaller, then the same term read from OpenSearch alone. */
async function timeQueries(m: MeasuredQueries): Promise<Omit<QueryFigures, 'phases'>> {
  const { search, index } = m.stack;
  const { queries, limit } = m.point;
  const full: number[] = [];
  const indexOnly: number[] = [];
  let visible = 0;
  let rawTotal = 0;
  let fullPages = 0;
  for (let i = 0; i < queries; i++) {
    const q = m.pickTerm();
    const a = performance.now();
    const answer = await searchForCaller(m.traced, m.identity, q, { size: limit, from: 0 });
    full.push(performance.now() - a);
    m.next();
    visible += answer.hits.length;
    rawTotal += answer.total;
    if (answer.hits.length === Math.min(limit, m.available.get(q)!)) fullPages += 1;
    const b = performance.now();
    // the bare backend: one OpenSearch read of a page of hits with their fields and snippets
    await search.client.search({ index, body: { query: matchQuery(q), ...HIT_FIELDS, track_total_hits: true, size: limit } as never });
    indexOnly.push(performance.now() - b);
  }
  return { full, indexOnly, visible, rawTotal, fullPages };
}

/** Each phase's milliseconds in each measured query (0 where a query did not reach the phase). */
function phaseRecorder(): { trace: NonNullable<SearchDeps['trace']>; next: () => void; summary: (queries: number) => Record<string, unknown> } {
  const perQuery: Partial<Record<SearchPhase, number>>[] = [];
  let current: Partial<Record<SearchPhase, number>> = {};
  return {
    trace: (phase, ms) => {
      current[phase] = (current[phase] ?? 0) + ms;
    },
    next: () => {
      perQuery.push(current);
      current = {};
    },
    summary: (queries) => {
      const phases: SearchPhase[] = ['reach', 'openSearch', 'rows', 'canView', 'readOn', 'fetch'];
      const out: Record<string, unknown> = {};
      for (const p of phases) {
        const ms = perQuery.map((q) => q[p] ?? 0);
        out[p] = {
          meanMs: round(ms.reduce((a, b) => a + b, 0) / queries, 2),
          p50Ms: round(percentile(ms, 50), 2),
          queriesWithIt: ms.filter((m) => m > 0).length,
        };
      }
      return out;
    },
  };
}

/** The point's search-index record. */
function indexRecord(point: Point, load1: number, seeded: Seeded, indexing: Indexing): Record<string, unknown> {
  const { rows } = seeded;
  const { indexed, indexSeconds } = indexing;
  return {
    bench: 'search-index',
    pages: point.pages,
    load1,
    through: seeded.viaIndexer ? 'indexer' : 'bulk writes of pageDocuments',
    archives: rows.length,
    indexed: indexed.indexed,
    indexedPages: indexed.pages,
    failed: indexed.failed,
    documentsInIndex: indexing.count,
    seconds: round(indexSeconds, 2),
    pagesPerSecond: round(indexed.pages / indexSeconds),
    seedSeconds: round(seeded.seedSeconds, 1),
    avgWaczBytes: Math.round(rows.reduce((n, r) => n + r.size, 0) / rows.length),
  };
}

/** The point's search-query record, and whether it met the goals. */
function queryRecord(point: Point, load1: number, documentsInIndex: number, q: QueryFigures): Record<string, unknown> {
  const { orgs, queries, limit } = point;
  const { full, indexOnly } = q;
  const p50 = percentile(full, 50);
  const ratioP50 = p50 / percentile(indexOnly, 50);
  return {
    bench: 'search-query',
    pages: documentsInIndex,
    orgs,
    callerSees: `1 of ${orgs} organizations`,
    queries,
    limit,
    p50Ms: round(p50, 1),
    p99Ms: round(percentile(full, 99), 1),
    meanMs: round(full.reduce((a, b) => a + b, 0) / full.length, 1),
    openSearchOnlyP50Ms: round(percentile(indexOnly, 50), 1),
    ratioP50: round(ratioP50, 2),
    fullPageRate: round(q.fullPages / queries, 3),
    openSearchOnlyP99Ms: round(percentile(indexOnly, 99), 1),
    ratioP99: round(percentile(full, 99) / percentile(indexOnly, 99), 2),
    avgRawTotal: Math.round(q.rawTotal / queries),
    avgVisibleHits: round(q.visible / queries, 2),
    phases: q.phases,
    load1,
    goal: 'fullPageRate 1, p50 ≤ 50 ms, ratioP50 ≤ 2.5',
    met: q.fullPages === queries && p50 <= 50 && ratioP50 <= 2.5,
  };
}

/** Requests one tuple load sends at once, and how often one request is sent at most. */
const TUPLE_WRITES_IN_FLIGHT = 8;
const TUPLE_WRITE_ATTEMPTS = 5;

/**
 * The tuples in OpenFGA, 100 a request, TUPLE_WRITES_IN_FLIGHT at once. On a loaded machine one
 * request of 100,000 pages' 1,000 can pass the client's 10 s timeout (which failed the 100,000
 * point): a failed request is sent again after a pause, and since a timed-out write may have
 * landed, a duplicate is no error.
 */
async function writeTuples(fga: OpenFgaClient, tuples: Tuple[]): Promise<void> {
  const writes = Array.from({ length: Math.ceil(tuples.length / 100) }, (_, i) => tuples.slice(i * 100, (i + 1) * 100));
  const conflict = { onDuplicateWrites: ClientWriteRequestOnDuplicateWrites.Ignore };
  await mapLimit(writes, TUPLE_WRITES_IN_FLIGHT, async (chunk) => {
    const body = { writes: chunk.map((t) => ({ user: t.user, relation: t.relation, object: t.object })) };
    for (let attempt = 1; ; attempt++) {
      try {
        return await fga.write(body, { conflict });
      } catch (err) {
        if (attempt === TUPLE_WRITE_ATTEMPTS) throw err;
        await new Promise((r) => setTimeout(r, 500 * attempt));
      }
    }
  });
}

/** The documents the indexer would write for these one-page archives, in bulk requests of 2,000, then marked indexed. */
async function writeDocuments(
  search: SearchIndex,
  db: Db,
  archives: { id: string; crawlId: string; url: string; title: string; text: string }[],
  when: Date,
): Promise<IndexResult> {
  await ensureIndex(search);
  for (let i = 0; i < archives.length; i += 2000) {
    const body: unknown[] = [];
    for (const a of archives.slice(i, i + 2000)) {
      const parsed = { header: { format: 'json-pages-1.0', id: 'pages' }, pages: [{ url: a.url, title: a.title, text: a.text, ts: when.toISOString() }] };
      for (const d of pageDocuments({ id: a.id, provenance: {}, captured_at: when, crawl_id: a.crawlId }, parsed as ParsedPages)) {
        body.push({ index: { _index: search.index, _id: documentId(d.archiveId, d.position) } }, d);
      }
    }
    const res = await search.client.bulk({ body: body as never });
    if (res.body.errors) throw new Error('bulk write refused a document');
  }
  await search.client.indices.refresh({ index: search.index });
  await sql`UPDATE archives SET indexed_at = now()`.execute(db);
  return { indexed: archives.length, pages: archives.length, failed: 0 };
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) printLines(await run());
