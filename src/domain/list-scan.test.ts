import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { compareNewestFirst, isPastCursor, type PageCursor } from './cursor.ts';
import { scanPage } from './list-scan.ts';

interface Row {
  id: string;
  at: Date;
}

/** An in-memory candidate source in newest-first order that honours cursors as the SQL does. */
function source(rows: Row[]) {
  const sorted = [...rows].sort(compareNewestFirst);
  const reads: number[] = [];
  const fetchChunk = async (cursor: PageCursor | undefined, size: number): Promise<Row[]> => {
    reads.push(size);
    return sorted.filter((r) => cursor === undefined || isPastCursor(r, cursor)).slice(0, size);
  };
  return { sorted, fetchChunk, reads };
}

const uuid = (n: number): string => `00000000-0000-4000-8000-${n.toString(16).padStart(12, '0')}`;
const key = (r: Row) => r;
const filterBy = (allowed: Set<string>) => async (chunk: Row[]) => new Set(chunk.filter((c) => allowed.has(c.id)).map((c) => c.id));

describe('scanPage', () => {
  it('fills the page even when most candidates are filtered out, one filter call per chunk', async () => {
    const rows = Array.from({ length: 1000 }, (_, i) => ({ id: uuid(i), at: new Date(1_000_000 - i * 1000) }));
    const src = source(rows);
    const allowed = new Set(rows.filter((_, i) => i % 37 === 0).map((r) => r.id));
    let calls = 0;
    const r = await scanPage(src.fetchChunk, async (chunk) => (calls++, filterBy(allowed)(chunk)), key, { limit: 20, maxExamined: 5000 });
    expect(r.rows.map((x) => x.id)).toEqual(
      src.sorted
        .filter((x) => allowed.has(x.id))
        .slice(0, 20)
        .map((x) => x.id),
    );
    expect(calls).toBe(r.chunks);
    expect(r.chunks).toBeLessThan(6);
    expect(r.stoppedEarly).toBe(false);
    expect(r.next).toEqual({ before: r.rows[19]!.at, id: r.rows[19]!.id });
  });

  it('stops at its bound for a caller who sees nothing, says so, and continues where it stopped', async () => {
    const rows = Array.from({ length: 10_000 }, (_, i) => ({ id: uuid(i), at: new Date(100_000_000 - i * 10) }));
    const src = source(rows);
    const r = await scanPage(src.fetchChunk, async () => new Set(), key, { limit: 50, maxExamined: 700 });
    expect(r).toMatchObject({ rows: [], stoppedEarly: true, examined: 700 });
    // a cursor strictly between the 700th and the 701st candidate, naming neither
    expect(src.sorted.filter((x) => isPastCursor(x, r.next!))).toEqual(src.sorted.slice(700));
    expect(r.next!.before.getTime()).not.toBe(src.sorted[699]!.at.getTime());
    expect(r.next!.before.getTime()).not.toBe(src.sorted[700]!.at.getTime());
    expect(src.reads.reduce((a, b) => a + b, 0)).toBeLessThanOrEqual(700 + r.chunks);
  });

  it('ends the page early when authorization fails after something was examined, and continues at the failed chunk', async () => {
    const rows = Array.from({ length: 100 }, (_, i) => ({ id: uuid(i), at: new Date(100_000 - i * 10) }));
    const src = source(rows);
    const allowed = new Set(rows.filter((_, i) => i % 10 === 0).map((r) => r.id));
    let calls = 0;
    const failing = async (chunk: Row[]) => {
      if (++calls === 2) throw new Error('deadline exceeded');
      return filterBy(allowed)(chunk);
    };
    const r = await scanPage(src.fetchChunk, failing, key, { limit: 50, maxExamined: 1000, firstChunk: 20 });
    expect(r).toMatchObject({ stoppedEarly: true, examined: 20 });
    expect(r.rows.map((x) => x.id)).toEqual([uuid(0), uuid(10)]);
    expect(src.sorted.filter((x) => isPastCursor(x, r.next!))).toEqual(src.sorted.slice(20));
  });

  it('fails when authorization fails before anything was examined', async () => {
    const src = source([{ id: uuid(1), at: new Date(1) }]);
    await expect(scanPage(src.fetchChunk, async () => Promise.reject(new Error('down')), key, { limit: 5, maxExamined: 10 })).rejects.toThrow('down');
  });

  it('returns fewer rows with no cursor only when the candidates run out', async () => {
    const rows = Array.from({ length: 30 }, (_, i) => ({ id: uuid(i), at: new Date(i * 10) }));
    const src = source(rows);
    const r = await scanPage(src.fetchChunk, filterBy(new Set([uuid(3), uuid(7)])), key, { limit: 50, maxExamined: 1000, firstChunk: 4 });
    expect(r.rows.map((x) => x.id)).toEqual([uuid(7), uuid(3)]);
    expect(r).toMatchObject({ examined: 30, stoppedEarly: false, next: undefined });
  });

  it('gives no cursor when the page fills on the very last candidate', async () => {
    const rows = Array.from({ length: 5 }, (_, i) => ({ id: uuid(i), at: new Date(i) }));
    const r = await scanPage(source(rows).fetchChunk, filterBy(new Set(rows.map((x) => x.id))), key, { limit: 5, maxExamined: 100 });
    expect(r.rows).toHaveLength(5);
    expect(r.next).toBeUndefined();
  });

  it('property: following the cursors lists every allowed row once, in order, each request within its bound', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.record({ t: fc.integer({ min: 0, max: 15 }), allowed: fc.boolean() }), { maxLength: 150 }),
        fc.integer({ min: 1, max: 25 }),
        fc.integer({ min: 1, max: 60 }),
        fc.integer({ min: 1, max: 30 }),
        async (spec, limit, maxExamined, firstChunk) => {
          // many rows share a timestamp: the tie-breaker must neither skip nor repeat them
          const rows = spec.map((s, i) => ({ id: uuid((i * 7919) % 1_000_003), at: new Date(s.t * 1000), allowed: s.allowed }));
          const src = source(rows);
          const allowed = new Set(rows.filter((r) => r.allowed).map((r) => r.id));
          const seen: string[] = [];
          let cursor: PageCursor | undefined;
          for (let requests = 0; ; requests++) {
            expect(requests).toBeLessThanOrEqual(rows.length + 1);
            let examinedHere = 0;
            const r = await scanPage(src.fetchChunk, async (chunk) => ((examinedHere += chunk.length), filterBy(allowed)(chunk)), key, {
              ...(cursor ? { cursor } : {}),
              limit,
              maxExamined,
              firstChunk,
              maxChunk: 40,
            });
            expect(examinedHere).toBeLessThanOrEqual(maxExamined);
            expect(r.rows.length).toBeLessThanOrEqual(limit);
            if (r.stoppedEarly) expect(r.examined).toBe(maxExamined);
            else if (r.next !== undefined) expect(r.rows).toHaveLength(limit);
            seen.push(...r.rows.map((x) => x.id));
            if (r.next === undefined) break;
            cursor = r.next;
          }
          expect(seen).toEqual(src.sorted.filter((x) => allowed.has(x.id)).map((x) => x.id));
        },
      ),
      { numRuns: 300 },
    );
  });
});
