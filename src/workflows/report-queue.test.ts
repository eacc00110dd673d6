import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ReportQueue } from './report-queue.ts';

describe('ReportQueue', () => {
  it('drops a signal whose reportId it has seen, even after that report was taken', () => {
    const q = new ReportQueue();
    expect(q.offer({ depth: 0, reportId: 'a' })).toBe(true);
    expect(q.offer({ depth: 0, reportId: 'a' })).toBe(false);
    expect(q.take(0)).toEqual({ depth: 0, reportId: 'a' });
    expect(q.offer({ depth: 0, reportId: 'a' })).toBe(false);
    expect(q.has(0)).toBe(false);
  });

  it('takes the newest report of a level and leaves other levels queued', () => {
    const q = new ReportQueue();
    q.offer({ depth: 1, reportId: 'a' });
    q.offer({ depth: 0, reportId: 'b' });
    q.offer({ depth: 1, reportId: 'c' });
    expect(q.take(1)).toEqual({ depth: 1, reportId: 'c' });
    expect(q.has(1)).toBe(false);
    expect(q.has(0)).toBe(true);
    expect(q.size).toBe(1);
    expect(q.take(1)).toBeUndefined();
  });

  it('lists earlier levels once each, in arrival order', () => {
    const q = new ReportQueue();
    for (const [depth, reportId] of [
      [1, 'a'],
      [0, 'b'],
      [1, 'c'],
      [3, 'd'],
      [2, 'e'],
    ] as const)
      q.offer({ depth, reportId });
    expect(q.earlierDepths(2)).toEqual([1, 0]);
    expect(q.earlierDepths(0)).toEqual([]);
  });

  it('for any signals: each distinct reportId is admitted at most once, and what a take returns is the last offered of its level', () => {
    fc.assert(
      fc.property(
        fc.array(fc.record({ depth: fc.integer({ min: 0, max: 3 }), reportId: fc.constantFrom('a', 'b', 'c', 'd', 'e', 'f') }), { maxLength: 40 }),
        (signals) => {
          const q = new ReportQueue();
          const accepted: { depth: number; reportId: string }[] = [];
          for (const s of signals) if (q.offer(s)) accepted.push(s);
          expect(new Set(accepted.map((s) => s.reportId)).size).toBe(accepted.length);
          for (let depth = 0; depth <= 3; depth += 1) {
            const want = accepted.filter((s) => s.depth === depth).at(-1);
            expect(q.take(depth)).toEqual(want);
          }
          expect(q.size).toBe(0);
        },
      ),
    );
  });
});
