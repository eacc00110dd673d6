import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { heartbeatGapMs, isPastDeadline, levelDeadline, levelPrefix } from './level.ts';
import { expectedManifestKey, isUnderPrefix, prefixOfManifestKey } from './level-dispatch.ts';

describe('levelPrefix', () => {
  it('is captures/<crawl>/<depth>/, and every manifest key built on it implies it back', () => {
    expect(levelPrefix('c1', 2)).toBe('captures/c1/2/');
    fc.assert(
      fc.property(fc.uuid(), fc.nat({ max: 9999 }), fc.stringMatching(/^[A-Za-z0-9_-][A-Za-z0-9._-]{0,20}$/), (crawlId, depth, taskId) => {
        fc.pre(taskId !== '.' && taskId !== '..');
        const prefix = levelPrefix(crawlId, depth);
        const key = expectedManifestKey(prefix, taskId);
        expect(prefixOfManifestKey(key, taskId)).toBe(prefix);
        expect(isUnderPrefix(key, prefix)).toBe(true);
      }),
    );
  });
});

describe('the deadline', () => {
  it('is the timeout after the dispatch, and passes only after its millisecond', () => {
    const d = levelDeadline(1_000, 60);
    expect(d.getTime()).toBe(61_000);
    expect(isPastDeadline(d, 61_000)).toBe(false);
    expect(isPastDeadline(d, 61_001)).toBe(true);
    expect(isPastDeadline(61_000, 61_001)).toBe(true);
    expect(isPastDeadline(undefined, Number.MAX_SAFE_INTEGER)).toBe(false);
  });
  it('a level is past its deadline exactly when now is later than dispatch + timeout', () => {
    fc.assert(
      fc.property(fc.nat({ max: 2 ** 40 }), fc.nat({ max: 86_400 }), fc.integer({ min: -1e6, max: 1e6 }), (at, seconds, offset) => {
        const now = at + seconds * 1000 + offset;
        expect(isPastDeadline(levelDeadline(at, seconds), now)).toBe(offset > 0);
      }),
    );
  });
});

describe('heartbeatGapMs', () => {
  it('is a quarter of the liveness window (60 s by default)', () => {
    expect(heartbeatGapMs(undefined)).toBe(15_000);
    expect(heartbeatGapMs(8)).toBe(2_000);
  });
});
