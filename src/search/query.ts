// Searching: OpenSearch ranks, then the ledger and OpenFGA can_view drop what the caller may not
// see — the same shape as GET /api/archives. The index knows nothing about permissions, so a
// narrow caller's hits are mostly dropped. Ranking reads therefore carry ids only and read well
// past the page (search_after, a bounded number of rounds, until the page is full); only the
// page's own documents are then fetched with their fields and snippets, since highlighting every
// hit read would cost more than the rest of the search. `total` stays the index's raw count and
// includes what authorization dropped.
import type { OpenFgaClient } from '@openfga/sdk';
import type { Db } from '../db/connect.ts';
import type { Identity } from '../domain/identity.ts';
import { isUuid } from '../domain/uuid.ts';
import { reachableObjects, viewableArchives } from '../fga/authorize.ts';
import { archivesWithin, type CandidateScope } from '../store/archives.ts';
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

/**
 * The read that ranks: document ids, scores and sort values only. No source and no highlight, so
 * reading past the hits a narrow caller may not see costs the index little. Pure, so tests can
 * check its shape.
 */
export function buildQuery(q: string, opts: SearchOptions): Record<string, unknown> {
  return {
    query: matchQuery(q),
    _source: false,
    // relevance, then a total order so search_after continues exactly where a read ended
    sort: [{ _score: 'desc' }, { archiveId: 'asc' }, { position: 'asc' }],
    track_total_hits: opts.trackTotal ?? true,
    size: opts.size,
    ...(opts.searchAfter === undefined ? { from: opts.from } : { search_after: opts.searchAfter }),
  };
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

/** One ranked document, before anything is known about it but its id. */
export interface IndexMatch {
  documentId: string;
  archiveId: string;
  score: number;
}

interface RawHit {
  _id?: string;
  _score?: number | null;
  sort?: unknown[];
  _source?: Partial<PageDocument>;
  highlight?: { text?: string[] };
}

const indexMissing = (err: unknown): boolean => (err as { body?: { error?: { type?: string } } }).body?.error?.type === 'index_not_found_exception';

/** Asks OpenSearch only, for the ranking. Nothing here decides who may see what. */
export async function queryIndex(
  search: SearchIndex,
  q: string,
  opts: SearchOptions,
): Promise<{ matches: IndexMatch[]; total: number; read: number; lastSort?: unknown[] }> {
  let res;
  try {
    res = await search.client.search({
      index: search.index,
      body: buildQuery(q, opts) as never,
      filter_path: ['hits.total.value', 'hits.hits._id', 'hits.hits._score', 'hits.hits.sort'],
    });
  } catch (err) {
    // nothing indexed yet (or the index was dropped for a rebuild): no hits, not an error
    if (indexMissing(err)) return { matches: [], total: 0, read: 0 };
    throw err;
  }
  const body = res.body as unknown as { hits?: { total?: { value?: number }; hits?: RawHit[] } };
  const raw = body.hits?.hits ?? [];
  const matches: IndexMatch[] = [];
  for (const h of raw) {
    // the document id is `<archiveId>:<position>` (documentId in schema.ts); one written by hand
    // in another shape keeps its place in the order (offsets count it) and is never shown
    const id = h._id ?? '';
    matches.push({ documentId: id, archiveId: id.slice(0, Math.max(id.lastIndexOf(':'), 0)), score: h._score ?? 0 });
  }
  const lastSort = raw[raw.length - 1]?.sort;
  return { matches, total: body.hits?.total?.value ?? 0, read: raw.length, ...(lastSort !== undefined ? { lastSort } : {}) };
}

/** The shown fields of `matches`, in their order; a document gone from the index since it was ranked is left out. */
export async function fetchHits(search: SearchIndex, q: string, matches: readonly IndexMatch[]): Promise<IndexHit[]> {
  if (matches.length === 0) return [];
  let res;
  try {
    res = await search.client.search({
      index: search.index,
      body: buildFetchQuery(
        q,
        matches.map((m) => m.documentId),
      ) as never,
      filter_path: ['hits.hits._id', 'hits.hits._source', 'hits.hits.highlight'],
    });
  } catch (err) {
    if (indexMissing(err)) return [];
    throw err;
  }
  const body = res.body as unknown as { hits?: { hits?: RawHit[] } };
  const byId = new Map((body.hits?.hits ?? []).map((h) => [h._id, h]));
  const hits: IndexHit[] = [];
  for (const m of matches) {
    const raw = byId.get(m.documentId);
    const s = raw?._source;
    if (!s || s.archiveId !== m.archiveId || typeof s.url !== 'string' || typeof s.capturedAt !== 'string') continue;
    const hit: IndexHit = { archiveId: m.archiveId, url: s.url, capturedAt: s.capturedAt, score: m.score };
    if (typeof s.title === 'string') hit.title = s.title;
    if (typeof s.textWithheld === 'string') hit.textWithheld = s.textWithheld;
    if (typeof s.ts === 'string') hit.ts = s.ts;
    const snippet = raw!.highlight?.text?.[0];
    if (snippet !== undefined) hit.snippet = snippet;
    hits.push(hit);
  }
  return hits;
}

export interface SearchDeps {
  db: Db;
  fga: OpenFgaClient;
  search: SearchIndex;
}

type LedgerRow = { object_key: string; captured_at: Date };

/**
 * What GET /api/search answers: the index's ranking, kept only where the archive is in the ledger
 * (the index may outlive a row) and OpenFGA says can_view; capturedAt comes from the ledger row.
 * Ranking reads carry ids only, so the first one reads well past the page (FIRST_READ_FACTOR ×
 * limit); when authorization drops more than that, reading goes on after the last hit read
 * (search_after) with a larger read, up to MAX_SEARCH_ROUNDS reads. Only the page's own
 * documents are then fetched with their fields and snippets.
 */
export async function searchForCaller(deps: SearchDeps, identity: Identity, q: string, opts: SearchOptions): Promise<SearchAnswer> {
  // from + size may not pass the index's result window; search_after reads are not bound by it
  let size = Math.min(MAX_ROUND_SIZE, Math.max(opts.size * FIRST_READ_FACTOR, MIN_FIRST_READ), Math.max(opts.size, MAX_RESULT_WINDOW - opts.from));
  // the caller's reach and the first ranking read do not depend on each other
  const [reach, first] = await Promise.all([reachableObjects(deps.fga, identity), queryIndex(deps.search, q, { size, from: opts.from, trackTotal: true })]);
  // as the listing does: for a caller who reaches few crawls, the ledger drops hits outside them
  // and only the rest are checked; otherwise every hit is checked
  const scope: CandidateScope = reach === undefined ? { kind: 'all' } : { kind: 'reachable', ...reach };
  const total = first.total;
  const page: IndexMatch[] = [];
  // archive id -> its ledger row when it is in the ledger and the scope (null when not); then
  // whether the caller may view it
  const inLedger = new Map<string, LedgerRow | null>();
  const viewable = new Map<string, boolean>();
  let consumed = 0;
  let read = first;
  for (let round = 1; ; round++) {
    await learnLedger(deps, scope, inLedger, read.matches);
    let i = 0;
    for (; i < read.matches.length && page.length < opts.size; i++) {
      const m = read.matches[i]!;
      if (inLedger.get(m.archiveId) === null) continue;
      if (!viewable.has(m.archiveId)) await learnViewable(deps, identity, inLedger, viewable, read.matches, i, opts.size - page.length);
      if (viewable.get(m.archiveId) === true) page.push(m);
    }
    if (page.length === opts.size) {
      const more = i < read.matches.length || read.read === size;
      return answer(deps, q, page, inLedger, total, more ? opts.from + consumed + i : undefined);
    }
    consumed += read.read;
    if (read.read < size || read.lastSort === undefined) return answer(deps, q, page, inLedger, total, undefined);
    if (round === MAX_SEARCH_ROUNDS) return answer(deps, q, page, inLedger, total, opts.from + consumed);
    // read enough to fill the rest at the ratio this read let through, plus a quarter
    const kept = read.matches.filter((m) => viewable.get(m.archiveId) === true).length;
    const ratio = Math.max(kept, 1) / Math.max(read.read, 1);
    size = Math.min(MAX_ROUND_SIZE, Math.max(size, Math.ceil(((opts.size - page.length) / ratio) * 1.25)));
    read = await queryIndex(deps.search, q, { size, from: opts.from, trackTotal: false, searchAfter: read.lastSort });
  }
}

/** The first ranking read asks for this many times the page (at least MIN_FIRST_READ): ids cost little. */
export const FIRST_READ_FACTOR = 10;
const MIN_FIRST_READ = 200;
/** Checks one BatchCheck round asks at least (one request of the SDK's batch size). */
const MIN_CHECKS = 50;

async function answer(
  deps: SearchDeps,
  q: string,
  page: IndexMatch[],
  ledger: Map<string, LedgerRow | null>,
  total: number,
  nextOffset: number | undefined,
): Promise<SearchAnswer> {
  const hits = (await fetchHits(deps.search, q, page)).map((h) => {
    const row = ledger.get(h.archiveId)!;
    return { ...h, capturedAt: row.captured_at.toISOString(), objectKey: row.object_key };
  });
  return { hits, total, ...(nextOffset !== undefined ? { nextOffset } : {}) };
}

/** Asks the ledger, within the scope, about the archives of `matches` not asked about yet (one query). */
async function learnLedger(deps: SearchDeps, scope: CandidateScope, inLedger: Map<string, LedgerRow | null>, matches: readonly IndexMatch[]): Promise<void> {
  const ids = new Set<string>();
  for (const m of matches) {
    if (inLedger.has(m.archiveId)) continue;
    if (isUuid(m.archiveId)) ids.add(m.archiveId);
    else inLedger.set(m.archiveId, null);
  }
  if (ids.size === 0) return;
  const rows = new Map((await archivesWithin(deps.db, [...ids], scope)).map((r) => [r.id, r]));
  for (const id of ids) inLedger.set(id, rows.get(id) ?? null);
}

/**
 * One BatchCheck over the next archives in `matches` from `start` (in order) that are in the
 * ledger and not checked yet: enough to fill what the page still needs, plus a quarter, at least
 * MIN_CHECKS.
 */
async function learnViewable(
  deps: SearchDeps,
  identity: Identity,
  inLedger: Map<string, LedgerRow | null>,
  viewable: Map<string, boolean>,
  matches: readonly IndexMatch[],
  start: number,
  needed: number,
): Promise<void> {
  const want = Math.max(MIN_CHECKS, Math.ceil(needed * 1.25));
  const ids = new Set<string>();
  for (let i = start; i < matches.length && ids.size < want; i++) {
    const id = matches[i]!.archiveId;
    if (inLedger.get(id) && !viewable.has(id)) ids.add(id);
  }
  const allowed = await viewableArchives(deps.fga, identity, [...ids]);
  for (const id of ids) viewable.set(id, allowed.has(id));
}
