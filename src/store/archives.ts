// Archive queries for the API. The ledger has no owner column: who may see a row is OpenFGA's
// answer, so these return candidates and the caller filters them.
import { sql } from 'kysely';
import type { Db } from '../db/connect.ts';
import type { Archive } from '../db/types.ts';

export async function findArchive(db: Db, id: string): Promise<Archive | undefined> {
  return db.selectFrom('archives').selectAll().where('id', '=', id).executeTakeFirst();
}

/**
 * Where a page of candidates starts. With only capturedAt: strictly older than it (what callers
 * pass as `before`). With an id: strictly after that row in (captured_at desc, id desc) order,
 * compared with the row's own stored timestamp (microseconds; a JS Date would round them).
 */
export interface ArchiveCursor {
  capturedAt: Date;
  id?: string;
}

/** Newest first (captured_at desc, id desc), strictly before the cursor. */
export async function archiveCandidates(db: Db, opts: { before?: ArchiveCursor; limit: number }): Promise<Archive[]> {
  let q = db.selectFrom('archives').selectAll();
  const before = opts.before;
  if (before !== undefined) {
    q = before.id === undefined ? q.where('captured_at', '<', before.capturedAt) : q.where(sql<boolean>`(captured_at, id) < ((SELECT a.captured_at FROM archives a WHERE a.id = ${before.id}::uuid), ${before.id}::uuid)`);
  }
  return q.orderBy('captured_at', 'desc').orderBy('id', 'desc').limit(opts.limit).execute();
}

/**
 * Fills a page of up to `limit` rows the caller may see, newest first. Candidates are read in
 * chunks and each chunk is filtered in one call (`filter`, one BatchCheck); reading goes on until
 * the page is full or the table is exhausted, so a caller who may see few rows still gets a full
 * page. Chunks grow when most of a chunk was filtered out.
 */
export async function fillPage<T extends Pick<Archive, 'id' | 'captured_at'>>(
  fetchChunk: (after: ArchiveCursor | undefined, size: number) => Promise<T[]>,
  filter: (rows: T[]) => Promise<Set<string>>,
  opts: { before?: Date; limit: number; firstChunk?: number; maxChunk?: number },
): Promise<{ rows: T[]; candidatesRead: number; chunks: number }> {
  const page: T[] = [];
  let cursor: ArchiveCursor | undefined = opts.before === undefined ? undefined : { capturedAt: opts.before };
  let size = opts.firstChunk ?? Math.max(opts.limit * 2, 50);
  const maxChunk = opts.maxChunk ?? 1000;
  let candidatesRead = 0;
  let chunks = 0;
  for (;;) {
    const chunk = await fetchChunk(cursor, size);
    chunks += 1;
    candidatesRead += chunk.length;
    if (chunk.length === 0) break;
    const allowed = await filter(chunk);
    for (const row of chunk) {
      if (allowed.has(row.id)) {
        page.push(row);
        if (page.length === opts.limit) return { rows: page, candidatesRead, chunks };
      }
    }
    if (chunk.length < size) break;
    const last = chunk[chunk.length - 1]!;
    cursor = { capturedAt: last.captured_at, id: last.id };
    // Size the next chunk from what this one let through: enough to fill the rest of the page
    // at the same ratio plus a quarter, never shrinking and never past maxChunk.
    const missing = opts.limit - page.length;
    const ratio = Math.max(allowed.size, 1) / chunk.length;
    size = Math.min(maxChunk, Math.max(size, Math.ceil((missing / ratio) * 1.25)));
  }
  return { rows: page, candidatesRead, chunks };
}

export interface ArchiveView {
  id: string;
  taskId: string;
  url: string;
  finalUrl: string | null;
  bucket: string;
  objectKey: string;
  sha256: string | null;
  size: number | null;
  capturedAt: string;
  indexedAt: string | null;
}

export function archiveView(a: Archive): ArchiveView {
  return {
    id: a.id,
    taskId: a.task_id,
    url: a.url,
    finalUrl: a.final_url,
    bucket: a.bucket,
    objectKey: a.object_key,
    sha256: a.sha256,
    size: a.size,
    capturedAt: a.captured_at.toISOString(),
    indexedAt: a.indexed_at === null ? null : a.indexed_at.toISOString(),
  };
}
