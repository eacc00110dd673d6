// Searching: OpenSearch first, then OpenFGA can_view (one BatchCheck) drops what the caller may
// not see — the same shape as GET /api/archives. The index knows nothing about permissions, so
// `total` is its raw count and includes what authorization dropped; ask for 50 and you may get 30.
import type { OpenFgaClient } from '@openfga/sdk';
import type { Db } from '../db/connect.ts';
import type { Identity } from '../domain/identity.ts';
import { viewableArchives } from '../fga/authorize.ts';
import type { SearchIndex } from './client.ts';
import type { PageDocument } from './schema.ts';

export const MAX_RESULT_WINDOW = 10_000;

export interface SearchOptions {
  size: number;
  from: number;
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
    track_total_hits: true,
    size: opts.size,
    from: opts.from,
  };
}

interface RawHit {
  _score?: number | null;
  _source?: Partial<PageDocument>;
  highlight?: { text?: string[] };
}

/** Asks OpenSearch only. Nothing here decides who may see what. */
export async function queryIndex(search: SearchIndex, q: string, opts: SearchOptions): Promise<{ hits: IndexHit[]; total: number }> {
  let res;
  try {
    res = await search.client.search({
      index: search.index,
      body: buildQuery(q, opts) as never,
      filter_path: ['hits.total.value', 'hits.hits._score', 'hits.hits._source', 'hits.hits.highlight'],
    });
  } catch (err) {
    // nothing indexed yet (or the index was dropped for a rebuild): no hits, not an error
    if ((err as { body?: { error?: { type?: string } } }).body?.error?.type === 'index_not_found_exception') return { hits: [], total: 0 };
    throw err;
  }
  const body = res.body as unknown as { hits?: { total?: { value?: number }; hits?: RawHit[] } };
  const hits: IndexHit[] = [];
  for (const h of body.hits?.hits ?? []) {
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
  return { hits, total: body.hits?.total?.value ?? 0 };
}

export interface SearchDeps {
  db: Db;
  fga: OpenFgaClient;
  search: SearchIndex;
}

/**
 * What GET /api/search answers: the index's hits, kept only where OpenFGA says can_view (one
 * BatchCheck over the distinct archives) and the archive is still in the ledger (the index may
 * outlive a row). capturedAt comes from the ledger row.
 */
export async function searchForCaller(deps: SearchDeps, identity: Identity, q: string, opts: SearchOptions): Promise<SearchAnswer> {
  const { hits, total } = await queryIndex(deps.search, q, opts);
  const ids = [...new Set(hits.map((h) => h.archiveId))];
  if (ids.length === 0) return { hits: [], total };
  const allowed = await viewableArchives(deps.fga, identity, ids);
  if (allowed.size === 0) return { hits: [], total };
  const rows = await deps.db
    .selectFrom('archives')
    .select(['id', 'object_key', 'captured_at'])
    .where('id', 'in', [...allowed])
    .execute();
  const ledger = new Map(rows.map((r) => [r.id, r]));
  const visible: SearchHit[] = [];
  for (const h of hits) {
    const row = ledger.get(h.archiveId);
    if (!allowed.has(h.archiveId) || row === undefined) continue;
    visible.push({ ...h, capturedAt: row.captured_at.toISOString(), objectKey: row.object_key });
  }
  return { hits: visible, total };
}
