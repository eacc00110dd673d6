import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { MAX_ENTRIES, REVERIFY_MS, verifiedTokens } from './verified-tokens.ts';

const alice = { subject: 'alice', organizations: ['acme'] };
const T0 = 1_800_000_000_000;
const exp = T0 / 1000 + 300;

describe('verified tokens', () => {
  it('answers a remembered token, and nothing for another', () => {
    const cache = verifiedTokens(5000);
    cache.remember('a.b.c', alice, exp, T0);
    expect(cache.get('a.b.c', T0 + 1000)).toEqual(alice);
    expect(cache.get('a.b.d', T0 + 1000)).toBeUndefined();
  });

  it('forgets a token once it expired, with the same leeway as the verifier', () => {
    const cache = verifiedTokens(5000);
    const short = exp - 250; // expires 50 s after T0, inside REVERIFY_MS
    cache.remember('s', alice, short, T0);
    expect(cache.get('s', short * 1000 + 4999)).toEqual(alice);
    expect(cache.get('s', short * 1000 + 5000)).toBeUndefined();
    // gone for good, even if asked about an earlier time
    expect(cache.get('s', T0)).toBeUndefined();
  });

  it('verifies afresh after REVERIFY_MS however long the token lives', () => {
    const cache = verifiedTokens(0);
    cache.remember('t', alice, exp + 86_400, T0);
    expect(cache.get('t', T0 + REVERIFY_MS - 1)).toEqual(alice);
    expect(cache.get('t', T0 + REVERIFY_MS)).toBeUndefined();
  });

  it('holds at most MAX_ENTRIES, dropping the oldest', () => {
    const cache = verifiedTokens(0);
    for (let i = 0; i <= MAX_ENTRIES; i++) cache.remember(`t${i}`, { subject: `u${i}`, organizations: [] }, exp, T0);
    expect(cache.get('t0', T0)).toBeUndefined();
    expect(cache.get('t1', T0)?.subject).toBe('u1');
    expect(cache.get(`t${MAX_ENTRIES}`, T0)?.subject).toBe(`u${MAX_ENTRIES}`);
  });

  it('never answers an expired or stale token, for any times (property)', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 10_000 }), fc.integer({ min: 0, max: 600 }), fc.integer({ min: -1000, max: 700_000 }), (tolMs, lifeS, laterMs) => {
        const cache = verifiedTokens(tolMs);
        const e = Math.floor(T0 / 1000) + lifeS;
        cache.remember('t', alice, e, T0);
        const got = cache.get('t', T0 + laterMs);
        const fresh = laterMs < REVERIFY_MS && T0 + laterMs < e * 1000 + tolMs;
        expect(got !== undefined).toBe(fresh);
      }),
    );
  });
});
