// The admission bench's read span (bench/support-read-span.ts): when a level's reads began and
// ended, and what the admission did outside them.
import { describe, expect, it } from 'vitest';
import { medianOutside, outsideReads, spanReader } from '../../bench/support-read-span.ts';
import type { ObjectRead, ObjectReader } from '../../src/s3/object-reader.ts';

/** A reader whose reads end when the test says so, in any order. */
function heldReader(): ObjectReader & { release: (key: string) => void; closed: () => boolean } {
  const waiting = new Map<string, () => void>();
  let closed = false;
  return {
    read: (_bucket, key) => new Promise<ObjectRead>((resolve) => waiting.set(key, () => resolve({ kind: 'ok', text: key }))),
    close: () => {
      closed = true;
    },
    release: (key) => waiting.get(key)!(),
    closed: () => closed,
  };
}

describe('the read span', () => {
  it('passes every argument through: a read of a version stays a read of that version', async () => {
    const asked: unknown[][] = [];
    const reader = spanReader({ read: async (...args) => (asked.push(args), { kind: 'missing' }), close: () => {} });
    await reader.read('b', 'k.result.json', 1024, 'v1');
    expect(asked).toEqual([['b', 'k.result.json', 1024, 'v1']]);
  });

  it('is from the first read asked for to the last one to finish, whatever order they finish in', async () => {
    const inner = heldReader();
    const reader = spanReader(inner);
    expect(reader.span()).toEqual({ first: null, last: null });
    const before = performance.now();
    const a = reader.read('b', 'a');
    const first = reader.span().first!;
    expect(first).toBeGreaterThanOrEqual(before);
    const b = reader.read('b', 'b');
    expect(reader.span()).toEqual({ first, last: null });
    inner.release('b');
    expect(await b).toEqual({ kind: 'ok', text: 'b' });
    const afterB = reader.span().last!;
    inner.release('a');
    expect(await a).toEqual({ kind: 'ok', text: 'a' });
    expect(reader.span().first).toBe(first);
    expect(reader.span().last!).toBeGreaterThanOrEqual(afterB);
    reader.close();
    expect(inner.closed()).toBe(true);
  });

  it('leaves before and after it what the admission did outside its reads, and nothing when it read nothing', () => {
    expect(outsideReads({ first: 110, last: 480 }, 100, 500)).toEqual({ beforeMs: 10, afterMs: 20 });
    expect(outsideReads({ first: 100.04, last: 500 }, 100, 500)).toEqual({ beforeMs: 0, afterMs: 0 });
    expect(outsideReads({ first: null, last: null }, 100, 500)).toBeNull();
  });

  it('takes the median of each part over the levels, and none when a level read nothing', () => {
    const levels = [
      { beforeMs: 10, afterMs: 30 },
      { beforeMs: 40, afterMs: 10 },
      { beforeMs: 20, afterMs: 20 },
    ];
    expect(medianOutside(levels)).toEqual({ beforeMs: 20, afterMs: 20 });
    expect(medianOutside([...levels, null])).toBeNull();
    expect(medianOutside([])).toBeNull();
  });
});
