// GET /api/archives as a service: the archives the caller may see, newest first, one bounded scan.
// Callers who reach few crawls get candidates from OpenFGA (ListObjects), intersected in SQL;
// otherwise every archive is a candidate. Either way each chunk is checked (can_view, one
// BatchCheck at MINIMIZE_LATENCY, so OpenFGA's caches may answer): the list shows exactly what
// OpenFGA allows, and grants nothing — signing checks again.
import type { OpenFgaClient } from '@openfga/sdk';
import type { Db } from '../../db/connect.ts';
import type { Archive } from '../../db/types.ts';
import { cursorQuery, type PageCursor } from '../../domain/cursor.ts';
import type { Identity } from '../../domain/identity.ts';
import { scanPage, type ScanResult } from '../../domain/list-scan.ts';
import { reachableObjects, viewableArchives } from '../../fga/authorize.ts';
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

/** rel="next" for a page of `limit` continuing at `next`. */
export function nextLink(next: PageCursor, limit: number): string {
  return `</api/archives?${new URLSearchParams({ ...cursorQuery(next), limit: String(limit) })}>; rel="next"`;
}

/** Where candidates come from: the caller's reach in OpenFGA, or every archive when that reach was cut. */
export async function candidateScope(fga: OpenFgaClient, identity: Identity): Promise<CandidateScope> {
  const reach = await reachableObjects(fga, identity);
  return reach === undefined ? { kind: 'all' } : { kind: 'reachable', ...reach };
}

/** One bounded scan of candidates in `scope`, each chunk filtered by can_view. */
export function scanArchives(
  deps: { db: Db; fga: OpenFgaClient },
  identity: Identity,
  scope: CandidateScope,
  page: { cursor: PageCursor | undefined; limit: number },
): Promise<ScanResult<Archive>> {
  return scanPage(
    (at, size) => archiveCandidates(deps.db, { ...(at ? { cursor: at } : {}), limit: size, scope }),
    (chunk) =>
      viewableArchives(
        deps.fga,
        identity,
        chunk.map((a) => a.id),
      ),
    (a) => ({ at: a.captured_at, id: a.id }),
    {
      ...(page.cursor ? { cursor: page.cursor } : {}),
      limit: page.limit,
      maxExamined: MAX_EXAMINED,
      // reached candidates are mostly visible: the first chunk need not be larger than the page
      ...(scope.kind === 'reachable' ? { firstChunk: page.limit } : {}),
    },
  );
}

export async function listArchives(
  deps: { db: Db; fga: OpenFgaClient },
  identity: Identity,
  page: { cursor: PageCursor | undefined; limit: number },
): Promise<ArchivePage> {
  const scope = await candidateScope(deps.fga, identity);
  const found = await scanArchives(deps, identity, scope, page);
  return {
    rows: found.rows.map(archiveView),
    link: found.next === undefined ? undefined : nextLink(found.next, page.limit),
    stoppedEarly: found.stoppedEarly,
    scan: { scope: scope.kind, examined: found.examined, chunks: found.chunks },
  };
}
