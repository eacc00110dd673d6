// The reads a search makes of OpenSearch, and nothing else: which pages match and in what order,
// and the fields a page is shown with. Nothing here decides who may see what (caller-search.ts
// does, with OpenFGA); a filter built from the caller's reach only narrows what is read.
import type { ReachableObjects } from '../fga/reach.ts';
import type { SearchIndex } from './client.ts';
import type { PageDocument } from './schema.ts';

export const MAX_RESULT_WINDOW = 10_000;
/** Index reads one search makes at most to fill its page. */
export const MAX_SEARCH_ROUNDS = 4;
/** Hits one index read asks for at most. */
export const MAX_ROUND_SIZE = 500;

export interface SearchOptions {
  size: number;
  from: number;
  /** continue after this hit (its sort values) instead of at `from` */
  searchAfter?: unknown[];
  /** count every match (the first read does; later rounds need no total) */
  trackTotal?: boolean;
  /** read only the pages this filter keeps (reachFilter); scores and order are the unfiltered ones */
  filter?: Record<string, unknown>;
}

/** One page as the index stores it (title, text snippet and where it came from). */
export interface IndexHit {
  archiveId: string;
  url: string;
  title?: string;
  textWithheld?: string;
  capturedAt: string;
  ts?: string;
  score: number;
  /** a stretch of the text around the match, when the match was in the text */
  snippet?: string;
}

/** One page in an answer: an IndexHit the caller may view, whose archive is in the ledger. */
export interface SearchHit extends IndexHit {
  objectKey: string;
}

export interface SearchAnswer {
  hits: SearchHit[];
  /** the index's raw count of matching pages, before authorization */
  total: number;
  /**
   * Where the next page starts (an `offset`, in the index's own order), when the page was full
   * or the rounds ran out with hits left; absent when every hit was read.
   */
  nextOffset?: number;
}

/** Every word (every bigram, for CJK) must appear, in the title or in the text; a title match weighs twice. */
export function matchQuery(q: string): Record<string, unknown> {
  return { multi_match: { query: q, fields: ['title^2', 'text'], type: 'best_fields', operator: 'and' } };
}

/** What a hit shows: the stored fields it is answered with, and a snippet of its text. */
export const HIT_FIELDS = {
  _source: ['archiveId', 'url', 'title', 'textWithheld', 'capturedAt', 'ts'],
  // plain text, no markup: the picker must not render index content as HTML
  highlight: { pre_tags: [''], post_tags: [''], fields: { text: { fragment_size: 160, number_of_fragments: 1 } } },
} as const;

/** relevance, then a total order so search_after continues exactly where a read ended */
const RANKING = [{ _score: 'desc' }, { archiveId: 'asc' }, { position: 'asc' }];

/**
 * The pages of the crawls and archives OpenFGA lists for the caller, and every page the index has
 * no crawl for (indexed before crawlId existed, or of an archive the ledger knows no crawl of):
 * those stay candidates, so they are checked rather than silently missed. Pure.
 */
export function reachFilter(reach: ReachableObjects): Record<string, unknown> {
  const should: Record<string, unknown>[] = [{ bool: { must_not: [{ exists: { field: 'crawlId' } }] } }];
  if (reach.jobs.length > 0) should.push({ terms: { crawlId: reach.jobs } });
  if (reach.shared.length > 0) should.push({ terms: { archiveId: reach.shared } });
  return { bool: { should, minimum_should_match: 1 } };
}

/** The match, narrowed by the filter when there is one; a filter clause does not change scores. */
function filteredMatch(q: string, filter: Record<string, unknown> | undefined): Record<string, unknown> {
  return filter === undefined ? matchQuery(q) : { bool: { must: [matchQuery(q)], filter: [filter] } };
}

/**
 * The read that ranks: document ids, scores and sort values only. No source and no highlight, so
 * reading past the hits a narrow caller may not see costs the index little. Pure, so tests can
 * check its shape.
 */
export function buildQuery(q: string, opts: SearchOptions): Record<string, unknown> {
  return {
    query: filteredMatch(q, opts.filter),
    _source: false,
    sort: RANKING,
    track_total_hits: opts.trackTotal ?? true,
    size: opts.size,
    ...(opts.searchAfter === undefined ? { from: opts.from } : { search_after: opts.searchAfter }),
  };
}

/**
 * The first read of a search within a reach: the filtered hits with their fields and snippets.
 * Its raw count is asked beside it (buildCountQuery): a filtered query cannot count what its
 * filter drops. Pure.
 */
export function buildFirstPageQuery(q: string, opts: SearchOptions & { filter: Record<string, unknown> }): Record<string, unknown> {
  return { query: filteredMatch(q, opts.filter), ...HIT_FIELDS, sort: RANKING, track_total_hits: false, size: opts.size, from: opts.from };
}

/** Every match counted, nothing read: a request of size 0, which the node's request cache keeps until the index next refreshes. Pure. */
export function buildCountQuery(q: string): Record<string, unknown> {
  return { query: matchQuery(q), size: 0, track_total_hits: true };
}

/** The read that fills a page: the chosen documents, with the same query so their snippets match it. */
export function buildFetchQuery(q: string, documentIds: readonly string[]): Record<string, unknown> {
  return {
    query: { bool: { must: [matchQuery(q)], filter: [{ ids: { values: documentIds } }] } },
    ...HIT_FIELDS,
    track_total_hits: false,
    size: documentIds.length,
  };
}

/** One ranked document; `hit` is its shown fields when the read carried them. */
export interface IndexMatch {
  documentId: string;
  archiveId: string;
  score: number;
  hit?: IndexHit;
}

/** What one ranking read found. */
export interface IndexRead {
  matches: IndexMatch[];
  /** the raw count of matches (0 when the read did not count) */
  total: number;
  /** hits read */
  read: number;
  /** sort values of the last hit read, to continue after it */
  lastSort?: unknown[];
}

interface RawHit {
  _id?: string;
  _score?: number | null;
  sort?: unknown[];
  _source?: Partial<PageDocument>;
  highlight?: { text?: string[] };
}

interface RawAnswer {
  hits?: { total?: { value?: number }; hits?: RawHit[] };
}

const indexMissing = (err: unknown): boolean => (err as { body?: { error?: { type?: string } } }).body?.error?.type === 'index_not_found_exception';

/** One search request; a missing index (nothing indexed yet, or dropped for a rebuild) answers nothing rather than an error. */
async function searchIndex(search: SearchIndex, body: Record<string, unknown>, filterPath: string[]): Promise<RawAnswer | undefined> {
  try {
    const res = await search.client.search({ index: search.index, body: body as never, filter_path: filterPath });
    return res.body as unknown as RawAnswer;
  } catch (err) {
    if (indexMissing(err)) return undefined;
    throw err;
  }
}

/**
 * The document id is `<archiveId>:<position>` (documentId in schema.ts); one written by hand in
 * another shape keeps its place in the order (offsets count it) and is never shown.
 */
function matchOf(h: RawHit): IndexMatch {
  const id = h._id ?? '';
  return { documentId: id, archiveId: id.slice(0, Math.max(id.lastIndexOf(':'), 0)), score: h._score ?? 0 };
}

/** The shown fields of a raw hit, when its stored source is whole and of the ranked archive. */
export function indexHitOf(m: Pick<IndexMatch, 'archiveId' | 'score'>, raw: RawHit | undefined): IndexHit | undefined {
  const s = raw?._source;
  if (!s || s.archiveId !== m.archiveId || typeof s.url !== 'string' || typeof s.capturedAt !== 'string') return undefined;
  const hit: IndexHit = { archiveId: m.archiveId, url: s.url, capturedAt: s.capturedAt, score: m.score };
  if (typeof s.title === 'string') hit.title = s.title;
  if (typeof s.textWithheld === 'string') hit.textWithheld = s.textWithheld;
  if (typeof s.ts === 'string') hit.ts = s.ts;
  const snippet = raw!.highlight?.text?.[0];
  if (snippet !== undefined) hit.snippet = snippet;
  return hit;
}

function readOf(body: RawAnswer | undefined, total: number, withFields: boolean): IndexRead {
  const raw = body?.hits?.hits ?? [];
  const matches = raw.map((h) => {
    const m = matchOf(h);
    const hit = withFields ? indexHitOf(m, h) : undefined;
    return hit === undefined ? m : { ...m, hit };
  });
  const lastSort = raw[raw.length - 1]?.sort;
  return { matches, total, read: raw.length, ...(lastSort !== undefined ? { lastSort } : {}) };
}

/** Asks OpenSearch only, for the ranking (ids, scores, sort values). */
export async function queryIndex(search: SearchIndex, q: string, opts: SearchOptions): Promise<IndexRead> {
  const body = await searchIndex(search, buildQuery(q, opts), ['hits.total.value', 'hits.hits._id', 'hits.hits._score', 'hits.hits.sort']);
  return readOf(body, body?.hits?.total?.value ?? 0, false);
}

/** The first read within a reach: filtered hits with their fields (buildFirstPageQuery), and beside it the raw count (buildCountQuery). */
export async function readFirstPage(search: SearchIndex, q: string, opts: SearchOptions & { filter: Record<string, unknown> }): Promise<IndexRead> {
  const [body, counted] = await Promise.all([
    searchIndex(search, buildFirstPageQuery(q, opts), ['hits.hits._id', 'hits.hits._score', 'hits.hits.sort', 'hits.hits._source', 'hits.hits.highlight']),
    searchIndex(search, buildCountQuery(q), ['hits.total.value']),
  ]);
  return readOf(body, counted?.hits?.total?.value ?? 0, true);
}

/** The shown fields of `matches`, by document id; a document gone from the index since it was ranked is absent. */
export async function fetchHits(search: SearchIndex, q: string, matches: readonly IndexMatch[]): Promise<Map<string, IndexHit>> {
  const hits = new Map<string, IndexHit>();
  if (matches.length === 0) return hits;
  const body = await searchIndex(
    search,
    buildFetchQuery(
      q,
      matches.map((m) => m.documentId),
    ),
    ['hits.hits._id', 'hits.hits._source', 'hits.hits.highlight'],
  );
  const byId = new Map((body?.hits?.hits ?? []).map((h) => [h._id, h]));
  for (const m of matches) {
    const hit = indexHitOf(m, byId.get(m.documentId));
    if (hit !== undefined) hits.set(m.documentId, hit);
  }
  return hits;
}
