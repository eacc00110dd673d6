// Searching for a caller: OpenSearch ranks, OpenFGA decides what the caller may see, the same
// shape as GET /api/archives. `total` stays the index's raw count and includes what authorization
// dropped.
//
// Within a reach (fga/reach.ts: the crawls and shares OpenFGA lists for the caller) the first read
// asks the index for those pages only, with their fields and snippets (the raw count asked beside
// it); its archives are then looked up in the ledger within that reach, as the listing reads its
// candidates (store/archives.ts reachableClause): an archive of a reached crawl whose parent tuple
// OpenFGA holds (none of it left in the outbox), or one shared with the caller. That is what
// can_view says of them, from OpenFGA's own lists, so no BatchCheck is asked per read; the index
// only narrows what is read and never decides: a page it lets through that is outside the reach
// is dropped. When a reach cannot be listed (too wide), every hit is a candidate: ranking reads
// carry ids only and read well past the page, OpenFGA's can_view checks go out in the index's
// order until the page is full, and only the page's own documents are fetched with their fields.
// Either way, when the page is not full the search reads on (search_after), a bounded number of
// rounds.
import type { OpenFgaClient } from '@openfga/sdk';
import type { Db } from '../db/connect.ts';
import type { Identity } from '../domain/identity.ts';
import { isUuid } from '../domain/uuid.ts';
import { viewableArchives } from '../fga/authorize.ts';
import { reachableJobs, sharedArchives, type ReachableObjects } from '../fga/reach.ts';
import { archivesWithin, type CandidateScope } from '../store/archives.ts';
import type { SearchIndex } from './client.ts';
import {
  fetchHits,
  MAX_RESULT_WINDOW,
  MAX_ROUND_SIZE,
  MAX_SEARCH_ROUNDS,
  queryIndex,
  reachFilter,
  readFirstPage,
  type IndexMatch,
  type IndexRead,
  type SearchAnswer,
  type SearchHit,
  type SearchOptions,
} from './query.ts';

/**
 * What a search spends its time on, for the bench: each phase's own duration. Some run side by
 * side: asking for the shares (reach) beside the first read, rows beside canView.
 */
export type SearchPhase = 'reach' | 'openSearch' | 'rows' | 'canView' | 'readOn' | 'fetch';

export interface SearchDeps {
  db: Db;
  fga: OpenFgaClient;
  search: SearchIndex;
  /** told how long each phase took */
  trace?: (phase: SearchPhase, ms: number) => void;
}

/** The first ranking read of a search without a reach asks for this many times the page (at least MIN_FIRST_READ): ids cost little. */
export const FIRST_READ_FACTOR = 10;
const MIN_FIRST_READ = 200;
/** Checks one BatchCheck round asks at least (one request of the SDK's batch size). */
const MIN_CHECKS = 50;

type LedgerRow = { object_key: string; captured_at: Date };

/** One search under way: what it asked, and what it has learnt of the archives it read. */
interface Search {
  deps: SearchDeps;
  identity: Identity;
  q: string;
  opts: SearchOptions;
  /** present, every read is narrowed by its filter and its archives are looked up within it */
  reach?: { scope: CandidateScope; filter: Record<string, unknown> };
  /** archive id -> its ledger row when it is in the ledger (within the reach, when there is one), null when not */
  rows: Map<string, LedgerRow | null>;
  viewable: Map<string, boolean>;
  page: IndexMatch[];
  /** hits read before the current read, past `from` */
  consumed: number;
}

/** What GET /api/search answers (see the top of this file). */
export async function searchForCaller(deps: SearchDeps, identity: Identity, q: string, opts: SearchOptions): Promise<SearchAnswer> {
  const s: Search = { deps, identity, q, opts, rows: new Map(), viewable: new Map(), page: [], consumed: 0 };
  const sharing = timed(deps, 'reach', () => sharedArchives(deps.fga, identity));
  sharing.catch(() => undefined); // awaited below; this only keeps an early failure from counting as unhandled
  const jobs = await timed(deps, 'reach', () => reachableJobs(deps.fga, identity));
  if (jobs === undefined) {
    await sharing;
    return searchAll(s);
  }
  // most callers have no shares: the read of their crawls goes out while the shares are asked
  const guess = readWithin(s, { jobs, shared: [] });
  guess.catch(() => undefined);
  const shared = await sharing;
  if (shared === undefined) return searchAll(s);
  const reach = { jobs, shared };
  const first = shared.length === 0 ? await guess : await readWithin(s, reach);
  s.reach = { scope: { kind: 'reachable', ...reach }, filter: reachFilter(reach) };
  return answer(s, first.read.total, await collect(s, first.read, first.size));
}

/** The first read within a reach, and the size it asked for. */
async function readWithin(s: Search, reach: ReachableObjects): Promise<{ read: IndexRead; size: number }> {
  // one past the page, so a full page knows whether anything follows it; a caller who reaches
  // nothing is answered the count alone
  const nothing = reach.jobs.length === 0 && reach.shared.length === 0;
  const size = nothing ? 0 : Math.min(s.opts.size + 1, MAX_RESULT_WINDOW - s.opts.from);
  const filter = reachFilter(reach);
  const read = await timed(s.deps, 'openSearch', () => readFirstPage(s.deps.search, s.q, { size, from: s.opts.from, filter }));
  return { read, size };
}

/** The least an id-only ranking read asks for: what a narrow caller's first read needs to find a page, reading past what it may not see. */
const wideRead = (limit: number): number => Math.min(MAX_ROUND_SIZE, Math.max(limit * FIRST_READ_FACTOR, MIN_FIRST_READ));

async function searchAll(s: Search): Promise<SearchAnswer> {
  const { size: limit, from } = s.opts;
  // from + size may not pass the index's result window; search_after reads are not bound by it
  const size = Math.min(wideRead(limit), Math.max(limit, MAX_RESULT_WINDOW - from));
  const first = await timed(s.deps, 'openSearch', () => queryIndex(s.deps.search, s.q, { size, from, trackTotal: true }));
  return answer(s, first.total, await collect(s, first, size));
}

/**
 * Fills the page from `first` and, while it is not full and hits are left, from further reads
 * (search_after), up to MAX_SEARCH_ROUNDS reads. Answers where the next page starts, if anywhere.
 */
async function collect(s: Search, first: IndexRead, firstSize: number): Promise<number | undefined> {
  let read = first;
  let size = firstSize;
  for (let round = 1; ; round++) {
    const taken = await takeVisible(s, read);
    if (s.page.length === s.opts.size) return taken < read.matches.length || read.read === size ? s.opts.from + s.consumed + taken : undefined;
    s.consumed += read.read;
    if (read.read < size || read.lastSort === undefined) return undefined;
    if (round === MAX_SEARCH_ROUNDS) return s.opts.from + s.consumed;
    size = nextReadSize(s, read, size);
    const after = { size, from: s.opts.from, trackTotal: false, searchAfter: read.lastSort, ...(s.reach ? { filter: s.reach.filter } : {}) };
    read = await timed(s.deps, 'readOn', () => queryIndex(s.deps.search, s.q, after));
  }
}

/**
 * Enough to fill the rest at the ratio the last read let through, plus a quarter, and at least a
 * wide read: hits dropped past a reach's first read are mostly pages it could not narrow (indexed
 * without a crawl), so the next read skips them as a read without a reach would.
 */
function nextReadSize(s: Search, read: IndexRead, size: number): number {
  const kept = read.matches.filter((m) => s.viewable.get(m.archiveId) === true).length;
  const ratio = Math.max(kept, 1) / Math.max(read.read, 1);
  return Math.min(MAX_ROUND_SIZE, Math.max(size, wideRead(s.opts.size), Math.ceil(((s.opts.size - s.page.length) / ratio) * 1.25)));
}

/** Adds the read's visible hits to the page, in order, until it is full; answers how many hits were looked at. */
async function takeVisible(s: Search, read: IndexRead): Promise<number> {
  const matches = read.matches;
  await learnLedger(s, matches);
  let i = 0;
  for (; i < matches.length && s.page.length < s.opts.size; i++) {
    const m = matches[i]!;
    if (s.rows.get(m.archiveId) == null) continue;
    if (!s.viewable.has(m.archiveId)) await learnViewable(s, matches, i, Math.max(MIN_CHECKS, Math.ceil((s.opts.size - s.page.length) * 1.25)));
    if (s.viewable.get(m.archiveId) === true) s.page.push(m);
  }
  return i;
}

/**
 * Asks the ledger about the archives of `matches` not asked about yet (one query by primary key).
 * Within a reach, only those it holds within the reach are found, and they are the viewable ones.
 */
async function learnLedger(s: Search, matches: readonly IndexMatch[]): Promise<void> {
  const ids = new Set<string>();
  for (const m of matches) {
    if (s.rows.has(m.archiveId)) continue;
    if (isUuid(m.archiveId)) ids.add(m.archiveId);
    else s.rows.set(m.archiveId, null);
  }
  if (ids.size === 0) return;
  const scope = s.reach?.scope ?? { kind: 'all' };
  const found = await timed(s.deps, 'rows', () => archivesWithin(s.deps.db, [...ids], scope));
  const rows = new Map(found.map((r) => [r.id, r]));
  for (const id of ids) {
    s.rows.set(id, rows.get(id) ?? null);
    if (s.reach !== undefined) s.viewable.set(id, rows.has(id));
  }
}

/** One BatchCheck over up to `want` archives of `matches` from `start` (in order) the ledger holds and not checked yet. */
async function learnViewable(s: Search, matches: readonly IndexMatch[], start: number, want: number): Promise<void> {
  const ids = new Set<string>();
  for (let i = start; i < matches.length && ids.size < want; i++) {
    const id = matches[i]!.archiveId;
    if (s.rows.get(id) != null && !s.viewable.has(id)) ids.add(id);
  }
  if (ids.size === 0) return;
  const allowed = await timed(s.deps, 'canView', () => viewableArchives(s.deps.fga, s.identity, [...ids]));
  for (const id of ids) s.viewable.set(id, allowed.has(id));
}

/** The page's hits with their ledger fields; only those read without their fields are fetched. */
async function answer(s: Search, total: number, nextOffset: number | undefined): Promise<SearchAnswer> {
  const unfetched = s.page.filter((m) => m.hit === undefined);
  const fetched = unfetched.length === 0 ? new Map() : await timed(s.deps, 'fetch', () => fetchHits(s.deps.search, s.q, unfetched));
  const hits: SearchHit[] = [];
  for (const m of s.page) {
    const hit = m.hit ?? fetched.get(m.documentId);
    const row = s.rows.get(m.archiveId)!;
    if (hit !== undefined) hits.push({ ...hit, capturedAt: row.captured_at.toISOString(), objectKey: row.object_key });
  }
  return { hits, total, ...(nextOffset !== undefined ? { nextOffset } : {}) };
}

async function timed<T>(deps: SearchDeps, phase: SearchPhase, work: () => Promise<T>): Promise<T> {
  if (deps.trace === undefined) return work();
  const started = performance.now();
  try {
    return await work();
  } finally {
    deps.trace(phase, performance.now() - started);
  }
}
