// One page of a newest-first list filtered by authorization, read with a bound. Candidates come in
// chunks (cursor, size) and each chunk is filtered in one call (one BatchCheck). Reading stops
// when the page is full, when the candidates run out, or when `maxExamined` candidates have been
// examined: a caller who may see little cannot make one request walk the whole table. A page that
// stopped early says so and carries a cursor that continues exactly where the scan stopped, one
// that names no row the caller was not shown (continuationBetween).
import { cursorAfter, type PageCursor } from './cursor.ts';
import { continuationBetween, type ScanRow } from './scan-cursor.ts';

export interface ScanOptions {
  /** where the page starts (the caller's `before` / `beforeId`) */
  cursor?: PageCursor;
  limit: number;
  /** candidates one request may examine at most */
  maxExamined: number;
  /** the first chunk's size (default: twice the limit, at least 50) */
  firstChunk?: number;
  /** chunks grow when most of one was filtered out, up to this (default 1000) */
  maxChunk?: number;
}

export interface ScanResult<T> {
  rows: T[];
  /** where the next page starts; undefined when nothing is left */
  next?: PageCursor;
  /** true when the bound on examined candidates ended the page before it was full */
  stoppedEarly: boolean;
  examined: number;
  chunks: number;
}

export async function scanPage<T>(
  fetchChunk: (cursor: PageCursor | undefined, size: number) => Promise<T[]>,
  filter: (rows: T[]) => Promise<Set<string>>,
  key: (row: T) => ScanRow,
  opts: ScanOptions,
): Promise<ScanResult<T>> {
  const page: T[] = [];
  let cursor = opts.cursor;
  let size = opts.firstChunk ?? Math.max(opts.limit * 2, 50);
  const maxChunk = opts.maxChunk ?? 1000;
  let examined = 0;
  let chunks = 0;
  let lastExamined: ScanRow | undefined;
  const done = (next: PageCursor | undefined, stoppedEarly = false): ScanResult<T> => ({ rows: page, next, stoppedEarly, examined, chunks });
  for (;;) {
    const n = Math.max(1, Math.min(size, opts.maxExamined - examined));
    // one candidate more than is examined: whether anything follows, and where the scan stopped
    const got = await fetchChunk(cursor, n + 1);
    chunks += 1;
    const more = got.length > n;
    const chunk = more ? got.slice(0, n) : got;
    if (chunk.length === 0) return done(undefined);
    let allowed: Set<string>;
    try {
      allowed = await filter(chunk);
    } catch (err) {
      // Authorization failed for this chunk (a timeout under load, say). With something already
      // examined, end the page there: it says it stopped early and continues at this chunk.
      if (lastExamined === undefined) throw err;
      return done(continuationBetween(lastExamined, key(chunk[0]!)), true);
    }
    examined += chunk.length;
    lastExamined = key(chunk[chunk.length - 1]!);
    for (let i = 0; i < chunk.length; i++) {
      const row = chunk[i]!;
      const k = key(row);
      if (!allowed.has(k.id)) continue;
      page.push(row);
      if (page.length === opts.limit) return done(more || i < chunk.length - 1 ? cursorAfter(k) : undefined);
    }
    if (!more) return done(undefined);
    const last = lastExamined!;
    if (examined >= opts.maxExamined) return done(continuationBetween(last, key(got[n]!)), true);
    cursor = cursorAfter(last);
    // Size the next chunk from what this one let through: enough to fill the rest of the page
    // at the same ratio plus a quarter, never shrinking and never past maxChunk.
    const ratio = Math.max(allowed.size, 1) / chunk.length;
    size = Math.min(maxChunk, Math.max(size, Math.ceil(((opts.limit - page.length) / ratio) * 1.25)));
  }
}
