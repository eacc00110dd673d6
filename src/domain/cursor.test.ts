import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { compareNewestFirst, cursorAfter, cursorQuery, isPastCursor, parseCursor, type PageCursor } from './cursor.ts';
import { InvalidInputError } from './invalid-input.ts';

const ID_A = '00000000-0000-4000-8000-00000000000a';
const ID_B = '00000000-0000-4000-8000-00000000000b';
const T = new Date('2026-11-30T12:00:00.123Z');

function fieldOf(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(InvalidInputError);
    return ((err as InvalidInputError).details.details as { field: string }[])[0]!.field;
  }
  return undefined;
}

describe('parseCursor', () => {
  it('is undefined without before', () => {
    expect(parseCursor({})).toBeUndefined();
  });
  it('keeps the spec meaning of before alone', () => {
    expect(parseCursor({ before: T.toISOString() })).toEqual({ before: T });
  });
  it('takes beforeId as the tie-breaker, lower-cased', () => {
    expect(parseCursor({ before: T.toISOString(), beforeId: ID_A.toUpperCase() })).toEqual({ before: T, id: ID_A });
  });
  it('names before when it is not a timestamp', () => {
    expect(fieldOf(() => parseCursor({ before: 'yesterday' }))).toBe('querystring.before');
  });
  it('names beforeId when it comes without before or is not a UUID', () => {
    expect(fieldOf(() => parseCursor({ beforeId: ID_A }))).toBe('querystring.beforeId');
    expect(fieldOf(() => parseCursor({ before: T.toISOString(), beforeId: 'x' }))).toBe('querystring.beforeId');
  });
  it('reads back what cursorQuery writes', () => {
    const c: PageCursor = { before: T, id: ID_B };
    expect(parseCursor(cursorQuery(c))).toEqual(c);
    expect(parseCursor(cursorQuery({ before: T }))).toEqual({ before: T });
  });
});

describe('isPastCursor', () => {
  it('before alone: strictly older only, so a row at the same millisecond is not past it', () => {
    expect(isPastCursor({ at: new Date(T.getTime() - 1), id: ID_B }, { before: T })).toBe(true);
    expect(isPastCursor({ at: T, id: ID_A }, { before: T })).toBe(false);
  });
  it('with an id: the same millisecond and a smaller id is past it', () => {
    expect(isPastCursor({ at: T, id: ID_A }, { before: T, id: ID_B })).toBe(true);
    expect(isPastCursor({ at: T, id: ID_B }, { before: T, id: ID_B })).toBe(false);
    expect(isPastCursor({ at: T, id: ID_B }, { before: T, id: ID_A })).toBe(false);
    expect(isPastCursor({ at: new Date(T.getTime() + 1), id: ID_A }, { before: T, id: ID_B })).toBe(false);
  });
  it('compares ids without regard to case', () => {
    expect(isPastCursor({ at: T, id: ID_A.toUpperCase() }, { before: T, id: ID_B })).toBe(true);
  });
});

// --- the universal claim: paging never loses or repeats a row ---------------------------------

const hex = fc.constantFrom(...'0123456789abcdef'.split(''));
const uuid = fc.array(hex, { minLength: 12, maxLength: 12 }).map((h) => `00000000-0000-4000-8000-${h.join('')}`);
// few distinct timestamps, so many rows share one
const rows = fc.uniqueArray(fc.record({ at: fc.integer({ min: 0, max: 4 }).map((n) => new Date(T.getTime() + n)), id: uuid }), {
  selector: (r) => r.id,
  maxLength: 80,
});

/** What the list routes do: sort newest first, keep what is past the cursor, take `limit`. */
function page<R extends { at: Date; id: string }>(all: R[], cursor: PageCursor | undefined, limit: number): R[] {
  return all
    .filter((r) => cursor === undefined || isPastCursor(r, cursor))
    .sort(compareNewestFirst)
    .slice(0, limit);
}

describe('paging with cursorAfter', () => {
  it('returns every row exactly once, in order, whatever the ties and page size', () => {
    fc.assert(
      fc.property(rows, fc.integer({ min: 1, max: 10 }), (all, limit) => {
        const seen: { at: Date; id: string }[] = [];
        let cursor: PageCursor | undefined;
        for (let n = 0; n <= all.length; n += 1) {
          const p = page(all, cursor, limit);
          seen.push(...p);
          if (p.length < limit) break;
          cursor = cursorAfter(p[p.length - 1]!);
        }
        expect(seen.map((r) => r.id)).toEqual([...all].sort(compareNewestFirst).map((r) => r.id));
      }),
    );
  });

  it('before alone (the spec cursor) skips exactly the rows that tie with the last one', () => {
    fc.assert(
      fc.property(rows, fc.integer({ min: 1, max: 10 }), (all, limit) => {
        const first = page(all, undefined, limit);
        fc.pre(first.length === limit);
        const last = first[first.length - 1]!;
        const next = page(all, { before: last.at }, all.length);
        const ties = all.filter((r) => r.at.getTime() === last.at.getTime() && !first.includes(r));
        expect(next.filter((r) => ties.includes(r))).toEqual([]);
        expect(next.length).toBe(all.length - first.length - ties.length);
      }),
    );
  });

  it('orders by time first, then id, both descending', () => {
    const a = { at: T, id: ID_A };
    const b = { at: T, id: ID_B };
    const older = { at: new Date(T.getTime() - 1), id: ID_B };
    expect([older, a, b].sort(compareNewestFirst)).toEqual([b, a, older]);
    expect(compareNewestFirst(a, { ...a })).toBe(0);
  });
});
