import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DISPATCH_PART_BYTES, DispatchAssembly, splitPages } from './dispatch-parts.ts';

const page = (url: string) => ({ url, follow: true });
const jsonBytes = (v: unknown): number => Buffer.byteLength(JSON.stringify(v));

describe('splitPages', () => {
  it('keeps a dispatch that fits in one part whole, and no pages as one empty part', () => {
    const pages = [page('https://a.test/'), page('https://b.test/')];
    expect(splitPages(pages)).toEqual([pages]);
    expect(splitPages([])).toEqual([[]]);
  });

  it('cuts where the next page would cross the limit, counting the array and its commas', () => {
    const p = page('https://a.test/x');
    expect(jsonBytes(p)).toBe(40);
    // [p,p] is 2 + 40 + 1 + 40 = 83 bytes; the counting allows a trailing comma: 2 + 2 × 41 = 84
    expect(splitPages([p, p, p], 84).map((part) => part.length)).toEqual([2, 1]);
    expect(splitPages([p, p, p], 83).map((part) => part.length)).toEqual([1, 1, 1]);
  });

  it('gives a page larger than the limit a part of its own', () => {
    const big = page(`https://a.test/${'x'.repeat(500)}`);
    const small = page('https://a.test/');
    expect(splitPages([small, big, small], 100)).toEqual([[small], [big], [small]]);
  });

  it('a level of 20,000 pages of 120-character URLs (2.5 MB) goes in parts of at most DISPATCH_PART_BYTES', () => {
    const pages = Array.from({ length: 20_000 }, (_, i) =>
      page(`https://docs.example.org/en/stable/reference/${String(i).padStart(6, '0')}/${'s'.repeat(63)}.html`),
    );
    expect(pages[0]!.url).toHaveLength(120);
    expect(jsonBytes(pages)).toBeGreaterThan(2_500_000);
    const parts = splitPages(pages);
    const fewest = Math.ceil(jsonBytes(pages) / DISPATCH_PART_BYTES);
    expect(parts.length).toBeGreaterThanOrEqual(fewest);
    expect(parts.length).toBeLessThanOrEqual(fewest + 1);
    for (const part of parts) expect(jsonBytes(part)).toBeLessThanOrEqual(DISPATCH_PART_BYTES);
    expect(parts.flat()).toEqual(pages);
  });

  it('refuses a limit that cannot hold an array', () => {
    expect(() => splitPages([], 1)).toThrow('maxBytes must be an integer ≥ 2, got 1');
    expect(() => splitPages([], 2.5)).toThrow(RangeError);
  });

  it('the parts put together are the pages in order, and a part over the limit holds one page', () => {
    fc.assert(
      fc.property(
        fc.array(fc.record({ url: fc.string({ maxLength: 60 }), follow: fc.boolean() }), { maxLength: 120 }),
        fc.integer({ min: 2, max: 400 }),
        (pages, max) => {
          const parts = splitPages(pages, max);
          expect(parts.flat()).toEqual(pages);
          expect(parts.length).toBeGreaterThanOrEqual(1);
          for (const part of parts) {
            if (pages.length > 0) expect(part.length).toBeGreaterThan(0);
            if (jsonBytes(part) > max) expect(part).toHaveLength(1);
          }
        },
      ),
    );
  });
});

describe('DispatchAssembly', () => {
  it('is complete once every part is in, in any order, and gives the pages in part order', () => {
    const a = new DispatchAssembly<number>('d1', 3);
    expect(a.add(2, [5, 6])).toBe(false);
    expect(a.add(0, [1, 2])).toBe(false);
    expect(a.complete).toBe(false);
    expect(() => a.pages()).toThrow('dispatch d1: 1 of 3 parts missing');
    expect(a.add(1, [3, 4])).toBe(true);
    expect(a.pages()).toEqual([1, 2, 3, 4, 5, 6]);
  });

  it('ignores a part heard again, and refuses one outside the dispatch', () => {
    const a = new DispatchAssembly<number>('d2', 2);
    expect(a.add(0, [1])).toBe(false);
    expect(a.add(0, [9])).toBe(false);
    expect(a.add(1, [2])).toBe(true);
    expect(a.pages()).toEqual([1, 2]);
    expect(() => a.add(2, [3])).toThrow('part 2 of a dispatch of 2');
    expect(() => new DispatchAssembly('d3', 0)).toThrow('a dispatch has at least one part, got 0');
  });
});
