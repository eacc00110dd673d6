// Where a bounded list scan continues when it stopped early. The scan examined candidates up to
// `last` and the next candidate it read but did not examine is `next`; both may be archives the
// caller may not see, so the cursor must not name either. It lies strictly between them instead:
// the midpoint of their timestamps (then `before` alone), or, when they share a millisecond, that
// timestamp with the midpoint of their ids as `beforeId`. Rows past the cursor are exactly `next`
// and everything after it (isPastCursor, which the SQL mirrors).
import type { PageCursor } from './cursor.ts';

export interface ScanRow {
  at: Date;
  id: string;
}

const hex = (id: string): bigint => BigInt(`0x${id.replaceAll('-', '')}`);

function uuidOf(n: bigint): string {
  const h = n.toString(16).padStart(32, '0');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

/**
 * A cursor between two neighbouring rows of a newest-first scan (`last` comes before `next`):
 * past it lie `next` and what follows, not `last`. Reveals neither row's timestamp nor id, only
 * an interval between them (which is empty of rows only when the two are 1 ms or one id apart).
 */
export function continuationBetween(last: ScanRow, next: ScanRow): PageCursor {
  const tl = last.at.getTime();
  const tn = next.at.getTime();
  if (tn > tl) throw new RangeError('continuationBetween: next must not be newer than last');
  if (tn < tl) return { before: new Date(tn + Math.ceil((tl - tn) / 2)) };
  const il = hex(last.id);
  const iN = hex(next.id);
  if (iN >= il) throw new RangeError('continuationBetween: next must come after last');
  return { before: new Date(tl), id: uuidOf(iN + (il - iN + 1n) / 2n) };
}
