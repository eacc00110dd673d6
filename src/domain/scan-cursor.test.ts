import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { compareNewestFirst, isPastCursor } from './cursor.ts';
import { continuationBetween, type ScanRow } from './scan-cursor.ts';

const uuid = (n: number): string => `00000000-0000-0000-0000-${n.toString(16).padStart(12, '0')}`;
const row = (ms: number, id: string): ScanRow => ({ at: new Date(ms), id });

// rows with few distinct timestamps, so ties are common; distinct (at, id) pairs, newest first
const scan = fc
  .uniqueArray(fc.record({ ms: fc.integer({ min: 0, max: 20 }), id: fc.uuid().map((s) => s.toLowerCase()) }), {
    minLength: 2,
    maxLength: 60,
    selector: (r) => `${r.ms}/${r.id}`,
  })
  .map((rs) => rs.map((r) => row(1_700_000_000_000 + r.ms * 3, r.id)).sort(compareNewestFirst));

describe('continuationBetween', () => {
  it('past the cursor lie exactly the rows from `next` on, for every split of any scan', () => {
    fc.assert(
      fc.property(scan, fc.nat(), (rows, k) => {
        const i = k % (rows.length - 1);
        const c = continuationBetween(rows[i]!, rows[i + 1]!);
        rows.forEach((r, j) => expect(isPastCursor(r, c), `row ${j}, split after ${i}`).toBe(j > i));
      }),
    );
  });

  it('names neither row: not the timestamp of either when they differ by more than 1 ms, never the id of `last` unless the ids are adjacent', () => {
    fc.assert(
      fc.property(scan, fc.nat(), (rows, k) => {
        const i = k % (rows.length - 1);
        const last = rows[i]!;
        const next = rows[i + 1]!;
        const c = continuationBetween(last, next);
        expect(c.id).not.toBe(next.id);
        if (c.id === undefined) {
          expect(c.before.getTime()).not.toBe(next.at.getTime());
          if (last.at.getTime() - next.at.getTime() > 1) expect(c.before.getTime()).not.toBe(last.at.getTime());
        } else if (BigInt(`0x${last.id.replaceAll('-', '')}`) - BigInt(`0x${next.id.replaceAll('-', '')}`) > 1n) {
          expect(c.id).not.toBe(last.id);
        }
      }),
    );
  });

  it('uses the midpoint of the timestamps when they differ, with no id', () => {
    expect(continuationBetween(row(1000, uuid(1)), row(990, uuid(9)))).toEqual({ before: new Date(995) });
    expect(continuationBetween(row(1000, uuid(1)), row(999, uuid(9)))).toEqual({ before: new Date(1000) });
  });

  it('uses the shared timestamp and the midpoint of the ids when they share a millisecond', () => {
    expect(continuationBetween(row(1000, uuid(20)), row(1000, uuid(10)))).toEqual({ before: new Date(1000), id: uuid(15) });
    expect(continuationBetween(row(1000, 'ffffffff-ffff-ffff-ffff-ffffffffffff'), row(1000, uuid(0)))).toEqual({
      before: new Date(1000),
      id: '80000000-0000-0000-0000-000000000000',
    });
  });

  it('refuses rows given in the wrong order', () => {
    expect(() => continuationBetween(row(990, uuid(1)), row(1000, uuid(1)))).toThrow(RangeError);
    expect(() => continuationBetween(row(1000, uuid(1)), row(1000, uuid(2)))).toThrow(RangeError);
    expect(() => continuationBetween(row(1000, uuid(1)), row(1000, uuid(1)))).toThrow(RangeError);
  });
});
