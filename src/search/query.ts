// Searching: OpenSearch first, then OpenFGA can_view (one BatchCheck per round) drops what the
// caller may not see — the same shape as GET /api/archives. The index knows nothing about
// permissions, so a narrow caller's hits are mostly dropped: the search reads on with
// search_after, a bounded number of rounds, until the page is full. `total` stays the index's raw
// count and includes what authorization dropped.
import type { OpenFgaClient } from '@openfga/sdk';
import type { Db } from '../db/connect.ts';
import type { Identity } from '../domain/identity.ts';
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

/** One page as the index returned it, before authorization. */
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

/**
 * The query: every word (every bigram, for CJK) must appear, in the title or in the text; a
 * title match weighs twice. Pure, so tests can check its shape.
 */
export function buildQuery(q: string, opts: SearchOptions): Record<string, unknown> {
  return {
    query: { multi_match: { query: q, fields: ['title^2', 'text'], type: 'best_fields', operator: 'and' } },
    _source: ['archiveId', 'url', 'title', 'textWithheld', 'capturedAt', 'ts'],
    // plain text, no markup: the picker must not render index content as HTML
    highlight: { pre_tags: [''], post_tags: [''], fields: { text: { fragment_size: 160, number_of_fragments: 1 } } },
    // relevance, then a total order so search_after continues exactly where a read ended
    sort: [{ _score: 'desc' }, { archiveId: 'asc' }, { position: 'asc' }],
    track_total_hits: opts.trackTotal ?? true,
    size: opts.size,
    ...(opts.searchAfter === undefined ? { from: opts.from } : { search_after: opts.searchAfter }),
  };
}

interface RawHit {
  _score?: number | null;
  sort?: unknown[];
  _source?: Partial<PageDocument>;
  highlight?: { text?: string[] };
}

/** Asks OpenSearch only. Nothing here decides who may see what. */
export async function queryIndex(search: SearchIndex, q: string, opts: SearchOptions): Promise<{ hits: IndexHit[]; total: number; read: number; lastSort?: unknown[] }> {
  let res;
  try {
    res = await search.client.search({
      index: search.index,
      body: buildQuery(q, opts) as never,
      filter_path: ['hits.total.value', 'hits.hits._score', 'hits.hits._source', 'hits.hits.highlight', 'hits.hits.sort'],
    });
  } catch (err) {
    // nothing indexed yet (or the index was dropped for a rebuild): no hits, not an error
    if ((err as { body?: { error?: { type?: string } } }).body?.error?.type === 'index_not_found_exception') return { hits: [], total: 0, read: 0 };
    throw err;
  }
  const body = res.body as unknown as { hits?: { total?: { value?: number }; hits?: RawHit[] } };
  const hits: IndexHit[] = [];
  const raw = body.hits?.hits ?? [];
  for (const h of raw) {
    const s = h._source;
    if (!s || typeof s.archiveId !== 'string' || typeof s.url !== 'string' || typeof s.capturedAt !== 'string') continue;
    const hit: IndexHit = { archiveId: s.archiveId, url: s.url, capturedAt: s.capturedAt, score: h._score ?? 0 };
    if (typeof s.title === 'string') hit.title = s.title;
    if (typeof s.textWithheld === 'string') hit.textWithheld = s.textWithheld;
    if (typeof s.ts === 'string') hit.ts = s.ts;
    const snippet = h.highlight?.text?.[0];
    if (snippet !== undefined) hit.snippet = snippet;
    hits.push(hit);
  }
  const lastSort = raw[raw.length - 1]?.sort;
  return { hits, total: body.hits?.total?.value ?? 0, read: raw.length, ...(lastSort !== undefined ? { lastSort } : {}) };
}

export interface SearchDeps {
  db: Db;
  fga: OpenFgaClient;
  search: SearchIndex;
}

/**
 * What GET /api/search answers: the index's hits, kept only where OpenFGA says can_view (one
 * BatchCheck per round over the archives not asked about yet) and the archive is still in the
 * ledger (the index may outlive a row). capturedAt comes from the ledger row. When authorization
 * drops hits, reading goes on after the last hit read (search_after) with a larger read, up to
 * MAX_SEARCH_ROUNDS reads, so a page is full whenever enough visible hits exist in that reach.
 */
export async function searchForCaller(deps: SearchDeps, identity: Identity, q: string, opts: SearchOptions): Promise<SearchAnswer> {
  // as the listing does: for a caller who reaches few crawls, the ledger drops hits outside them
  // and only the rest are checked; otherwise every hit is checked
  const reach = await reachableObjects(deps.fga, identity);
  const scope: CandidateScope = reach === undefined ? { kind: 'all' } : { kind: 'reachable', ...reach };
  const visible: SearchHit[] = [];
  // archive id -> its ledger row when the caller may view it and it exists, null otherwise
  const known = new Map<string, { object_key: string; captured_at: Date } | null>();
  let total = 0;
  let consumed = 0;
  let after: unknown[] | undefined;
  let size = Math.min(MAX_ROUND_SIZE, Math.max(opts.size * 2, 20));
  for (let round = 0; round < MAX_SEARCH_ROUNDS; round++) {
    // from + size may not pass the index's result window; search_after reads are not bound by it
    if (after === undefined) size = Math.min(size, Math.max(opts.size, MAX_RESULT_WINDOW - opts.from));
    const read = await queryIndex(deps.search, q, { size, from: opts.from, trackTotal: round === 0, ...(after !== undefined ? { searchAfter: after } : {}) });
    if (round === 0) total = read.total;
    await learn(deps, identity, scope, known, read.hits);
    let kept = 0;
    for (let i = 0; i < read.hits.length; i++) {
      const h = read.hits[i]!;
      const row = known.get(h.archiveId);
      if (row === null || row === undefined) continue;
      kept += 1;
      visible.push({ ...h, capturedAt: row.captured_at.toISOString(), objectKey: row.object_key });
      if (visible.length === opts.size) {
        const next = opts.from + consumed + i + 1;
        const more = i < read.hits.length - 1 || read.read === size;
        return { hits: visible, total, ...(more ? { nextOffset: next } : {}) };
      }
    }
    consumed += read.read;
    if (read.read < size || read.lastSort === undefined) return { hits: visible, total };
    after = read.lastSort;
    // read enough to fill the rest at the ratio this read let through, plus a quarter
    const ratio = Math.max(kept, 1) / Math.max(read.read, 1);
    size = Math.min(MAX_ROUND_SIZE, Math.max(size, Math.ceil(((opts.size - visible.length) / ratio) * 1.25)));
  }
  return { hits: visible, total, nextOffset: opts.from + consumed };
}

/** Asks the ledger (within the scope) and then OpenFGA (one BatchCheck) about the archives of `hits` not known yet. */
async function learn(
  deps: SearchDeps,
  identity: Identity,
  scope: CandidateScope,
  known: Map<string, { object_key: string; captured_at: Date } | null>,
  hits: IndexHit[],
): Promise<void> {
  const ids = [...new Set(hits.map((h) => h.archiveId))].filter((id) => !known.has(id) && UUID.test(id));
  for (const h of hits) if (!known.has(h.archiveId) && !UUID.test(h.archiveId)) known.set(h.archiveId, null);
  if (ids.length === 0) return;
  const rows = await archivesWithin(deps.db, ids, scope);
  const allowed = await viewableArchives(deps.fga, identity, rows.map((r) => r.id));
  const ledger = new Map(rows.filter((r) => allowed.has(r.id)).map((r) => [r.id, r]));
  for (const id of ids) known.set(id, ledger.get(id) ?? null);
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
