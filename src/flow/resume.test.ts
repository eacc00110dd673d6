import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { pageTaskId } from './resume.ts';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describe('pageTaskId', () => {
  it('is a version-8 UUID, the same for the same page of the same level and different otherwise', () => {
    fc.assert(
      fc.property(fc.uuid(), fc.nat(20), fc.webUrl(), fc.webUrl(), (crawl, depth, a, b) => {
        const id = pageTaskId(crawl, depth, a);
        expect(id).toMatch(UUID);
        expect(pageTaskId(crawl, depth, a)).toBe(id);
        expect(pageTaskId(crawl, depth + 1, a)).not.toBe(id);
        if (a !== b) expect(pageTaskId(crawl, depth, b)).not.toBe(id);
      }),
    );
  });

  it('does not run fields together: depth 1 of url "2x" is not depth 12 of "x"', () => {
    expect(pageTaskId('c', 1, '2http://x/')).not.toBe(pageTaskId('c', 12, 'http://x/'));
  });
});
