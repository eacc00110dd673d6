import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { capabilityHash, capabilityMatches, MAX_CAPABILITY_LENGTH, mintCapability } from './capability.ts';

describe('level capabilities', () => {
  it('are 32 random bytes in base64url, different every time', () => {
    const caps = Array.from({ length: 50 }, mintCapability);
    for (const c of caps) expect(c).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(new Set(caps).size).toBe(caps.length);
  });

  it('match their own digest among several, and nothing else', () => {
    const [a, b, c] = [mintCapability(), mintCapability(), mintCapability()];
    const kept = [capabilityHash(a), capabilityHash(b)];
    expect(capabilityMatches(a, kept)).toBe(true);
    expect(capabilityMatches(b, kept)).toBe(true);
    expect(capabilityMatches(c, kept)).toBe(false);
    expect(capabilityMatches(undefined, kept)).toBe(false);
    expect(capabilityMatches('', [capabilityHash('')])).toBe(false);
    expect(capabilityMatches(a, [])).toBe(false);
    // the digest itself is not the capability
    expect(capabilityMatches(capabilityHash(a).toString('base64url'), kept)).toBe(false);
    expect(capabilityMatches('x'.repeat(MAX_CAPABILITY_LENGTH + 1), [capabilityHash('x'.repeat(MAX_CAPABILITY_LENGTH + 1))])).toBe(false);
  });

  it('a changed capability never matches (property)', () => {
    fc.assert(
      fc.property(fc.string({ minLength: 1, maxLength: 100 }), fc.string({ minLength: 1, maxLength: 100 }), (cap, other) => {
        expect(capabilityMatches(cap, [capabilityHash(cap)])).toBe(true);
        if (other !== cap) expect(capabilityMatches(other, [capabilityHash(cap)])).toBe(false);
      }),
    );
  });
});
