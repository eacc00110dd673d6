// GET /api/archives as a service: the archives the caller may see, newest first, one bounded scan.
// Callers whose reach in OpenFGA is complete are answered from it: the capture jobs they reach
// (ListObjects, kept for the list cache's window) intersected in SQL with the archives whose parent
// tuple OpenFGA has accepted, and the archives shared with them (ListObjects, asked fresh). That is
// what can_view says of each (viewer, or owner or member from parent), so no chunk is checked
// again. Otherwise every archive is a candidate and each chunk is checked (can_view, one BatchCheck
// at MINIMIZE_LATENCY, so OpenFGA's caches may answer). Either way the list shows what OpenFGA
// allows, and grants nothing — signing checks again.
import type { OpenFgaClient } from '@openfga/sdk';
import type { Db } from '../../db/connect.ts';
import type { Archive } from '../../db/types.ts';
import { cursorQuery, type PageCursor } from '../../domain/cursor.ts';
import type { Identity } from '../../domain/identity.ts';
import { scanPage, type ScanResult } from '../../domain/list-scan.ts';
import { viewableArchives } from '../../fga/authorize.ts';
import { reachableJobs, sharedArchives } from '../../fga/reach.ts';
import { archiveCandidates, archiveView, type ArchiveView, type CandidateScope } from '../../store/archives.ts';
import { MAX_EXAMINED } from '../schemas/archives.ts';

export interface ArchivePage {
  rows: ArchiveView[];
  /** the Link header continuing the list; undefined when nothing is left */
  link: string | undefined;
  /** true when the bound on examined candidates ended the page before it was full */
  stoppedEarly: boolean;
  /** for the log: how the candidates were read and how many were examined */
  scan: { scope: CandidateScope['kind']; examined: number; chunks: number };
}

type ListingDeps = { db: Db; fga: OpenFgaClient };
type PageRequest = { cursor: PageCursor | undefined; limit: number };

/** rel="next" for a page of `limit` continuing at `next`. */
export function nextLink(next: PageCursor, limit: number): string {
  return `</api/archives?${new URLSearchParams({ ...cursorQuery(next), limit: String(limit) })}>; rel="next"`;
}

/** The first chunk's size in `scope`: reached candidates are mostly visible, so no larger than the page. */
const firstChunkOf = (scope: CandidateScope, limit: number): number | undefined => (scope.kind === 'reachable' ? Math.min(limit, MAX_EXAMINED) : undefined);

const readCandidates = (db: Db, scope: CandidateScope, at: PageCursor | undefined, size: number) =>
  archiveCandidates(db, { ...(at ? { cursor: at } : {}), limit: size, scope });

/** Which of a chunk the caller may view: all of a reached scope (OpenFGA's answer already), each of any other as can_view says. */
function allowedOf(deps: ListingDeps, identity: Identity, scope: CandidateScope, chunk: Archive[]): Promise<Set<string>> {
  if (scope.kind === 'reachable') return Promise.resolve(new Set(chunk.map((a) => a.id)));
  return viewableArchives(
    deps.fga,
    identity,
    chunk.map((a) => a.id),
  );
}

/**
 * The first read a scan of `scope` will make, made now: at the page's cursor, the first chunk and
 * one more candidate (as scanPage reads). Only a reached scope has a first chunk of its own, so only
 * it is read ahead; nothing is checked ahead, since a reached scope's rows are all allowed.
 */
export function readAhead(deps: ListingDeps, scope: CandidateScope, page: PageRequest): Promise<Archive[]> | undefined {
  const size = firstChunkOf(scope, page.limit);
  if (size === undefined) return undefined;
  const rows = readCandidates(deps.db, scope, page.cursor, size + 1);
  // awaited by the scan when it is used; this only keeps a read nobody needed from counting as unhandled
  rows.catch(() => undefined);
  return rows;
}

/** One bounded scan of candidates in `scope`, each chunk filtered by what the caller may view; `ahead`, when given, is its first read (readAhead of the same scope and page). */
export function scanArchives(
  deps: ListingDeps,
  identity: Identity,
  scope: CandidateScope,
  page: PageRequest,
  ahead?: Promise<Archive[]>,
): Promise<ScanResult<Archive>> {
  const firstChunk = firstChunkOf(scope, page.limit);
  let head = ahead;
  return scanPage(
    (at, size) => {
      const first = head;
      head = undefined;
      return first ?? readCandidates(deps.db, scope, at, size);
    },
    (chunk) => allowedOf(deps, identity, scope, chunk),
    (a) => ({ at: a.captured_at, id: a.id }),
    {
      ...(page.cursor ? { cursor: page.cursor } : {}),
      limit: page.limit,
      maxExamined: MAX_EXAMINED,
      ...(firstChunk !== undefined ? { firstChunk } : {}),
    },
  );
}

/**
 * Where candidates come from and the scan's first chunk. The crawls' chunk is read and checked
 * while the shares are asked: most callers have none, and their page is then that chunk.
 */
async function candidatesOf(deps: ListingDeps, identity: Identity, page: PageRequest): Promise<{ scope: CandidateScope; ahead?: Promise<Archive[]> }> {
  const sharing = sharedArchives(deps.fga, identity);
  sharing.catch(() => undefined); // awaited below; this only keeps an early failure from counting as unhandled
  const jobs = await reachableJobs(deps.fga, identity);
  if (jobs === undefined) {
    await sharing;
    return { scope: { kind: 'all' } };
  }
  const guess: CandidateScope = { kind: 'reachable', jobs, shared: [] };
  const ahead = readAhead(deps, guess, page);
  const shared = await sharing;
  if (shared === undefined) return { scope: { kind: 'all' } };
  if (shared.length === 0) return { scope: guess, ...(ahead ? { ahead } : {}) };
  return { scope: { kind: 'reachable', jobs, shared } };
}

export async function listArchives(deps: ListingDeps, identity: Identity, page: PageRequest): Promise<ArchivePage> {
  const { scope, ahead } = await candidatesOf(deps, identity, page);
  const found = await scanArchives(deps, identity, scope, page, ahead);
  return {
    rows: found.rows.map(archiveView),
    link: found.next === undefined ? undefined : nextLink(found.next, page.limit),
    stoppedEarly: found.stoppedEarly,
    scan: { scope: scope.kind, examined: found.examined, chunks: found.chunks },
  };
}
