import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { formatSize, highlight, plotGaps } from './format.js';

describe('highlight', () => {
  it('marks each query word, case-insensitively, and the segments join back to the text', () => {
    expect(highlight('The Cat sat on the cat mat', 'cat')).toEqual([
      { text: 'The ', mark: false },
      { text: 'Cat', mark: true },
      { text: ' sat on the ', mark: false },
      { text: 'cat', mark: true },
      { text: ' mat', mark: false },
    ]);
    expect(highlight('a (b) c', '(b)')).toEqual([{ text: 'a (b) c', mark: false }]);
    fc.assert(
      fc.property(fc.string(), fc.string(), (text, q) => {
        const segs = highlight(text, q);
        expect(segs.map((s) => s.text).join('')).toBe(text);
        expect(segs.every((s) => s.text.length > 0)).toBe(true);
      }),
    );
  });
});

describe('plotGaps', () => {
  it('puts every point inside the box, one series per host, a gap under its owed delay marked short', () => {
    const box = { width: 200, height: 100, pad: 10 };
    const out = plotGaps(
      [
        { host: 'a.test', gapsMs: [500, 1500, 1000], owedMs: 1000 },
        { host: 'b.test', gapsMs: [2000], owedMs: 1000 },
      ],
      box,
    );
    expect(out.max).toBe(2000);
    expect(out.series.map((s) => s.host)).toEqual(['a.test', 'b.test']);
    expect(out.series[0]!.points.map((p) => p.short)).toEqual([true, false, false]);
    expect(out.series[1]!.points[0]!.y).toBe(10);
    expect(out.series[0]!.owedY).toBe(50);
    fc.assert(
      fc.property(fc.array(fc.record({ host: fc.string(), gapsMs: fc.array(fc.integer({ min: -1000, max: 1e7 })), owedMs: fc.nat(1e6) })), (series) => {
        for (const s of plotGaps(series, box).series) {
          for (const p of s.points) {
            expect(p.x).toBeGreaterThanOrEqual(10);
            expect(p.x).toBeLessThanOrEqual(190);
            expect(p.y).toBeGreaterThanOrEqual(10);
            expect(p.y).toBeLessThanOrEqual(90);
          }
        }
      }),
    );
  });
});

describe('formatSize', () => {
  it('reads as B, KiB, MiB', () => {
    expect([formatSize(null), formatSize(12), formatSize(2048), formatSize(3 * 1048576)]).toEqual(['', '12 B', '2.0 KiB', '3.0 MiB']);
  });
});
