import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { IdentityClaimError, identityFromClaims, identityFromDevHeaders, isValidName, MAX_NAME_LENGTH, MAX_ORGANIZATIONS } from '../../src/config/identity.ts';

describe('identityFromClaims', () => {
  it('takes sub and the organizations array', () => {
    expect(identityFromClaims({ sub: 'alice', organizations: ['acme', 'globex'], iss: 'x' })).toEqual({ subject: 'alice', organizations: ['acme', 'globex'] });
  });
  it('treats missing organizations as none, and drops duplicates keeping the first order', () => {
    expect(identityFromClaims({ sub: 'alice' })).toEqual({ subject: 'alice', organizations: [] });
    expect(identityFromClaims({ sub: 'a', organizations: ['b', 'c', 'b'] }).organizations).toEqual(['b', 'c']);
  });
  it.each<[Record<string, unknown>, string]>([
    [{}, 'no sub'],
    [{ sub: '' }, 'empty sub'],
    [{ sub: 42 }, 'numeric sub'],
    [{ sub: 'a b' }, 'whitespace'],
    [{ sub: 'a#member' }, 'userset'],
    [{ sub: '*' }, 'wildcard'],
    [{ sub: 'x'.repeat(MAX_NAME_LENGTH + 1) }, 'too long'],
    [{ sub: 'a\u0000' }, 'control character'],
    [{ sub: 'a', organizations: 'acme' }, 'organizations not an array'],
    [{ sub: 'a', organizations: [1] }, 'organization not a string'],
    [{ sub: 'a', organizations: ['ok', 'bad org'] }, 'organization with a space'],
    [{ sub: 'a', organizations: Array.from({ length: MAX_ORGANIZATIONS + 1 }, (_, i) => `o${i}`) }, 'too many organizations'],
  ])('refuses %j (%s)', (claims) => {
    expect(() => identityFromClaims(claims)).toThrow(IdentityClaimError);
  });
  it('accepts provider-style subjects with | and :', () => {
    expect(identityFromClaims({ sub: 'auth0|123:x' }).subject).toBe('auth0|123:x');
  });
});

describe('identityFromDevHeaders', () => {
  it('splits organizations on commas and trims', () => {
    expect(identityFromDevHeaders(' bob ', ' acme , globex,,')).toEqual({ subject: 'bob', organizations: ['acme', 'globex'] });
  });
  it('no subject header (or a blank one) is no identity', () => {
    expect(identityFromDevHeaders(undefined, 'acme')).toBeNull();
    expect(identityFromDevHeaders('   ', undefined)).toBeNull();
  });
  it('refuses an invalid subject or organization', () => {
    expect(() => identityFromDevHeaders('a#b', undefined)).toThrow(IdentityClaimError);
    expect(() => identityFromDevHeaders('bob', 'acme,a#b')).toThrow(IdentityClaimError);
    expect(() => identityFromDevHeaders(['a', 'b'], undefined)).toThrow(IdentityClaimError);
  });
});

describe('isValidName (property)', () => {
  const good = fc.stringMatching(/^[A-Za-z0-9_.|:@+-]{1,200}$/).filter((s) => s !== '*');
  it('accepts every non-empty printable name without whitespace or #, up to 200 characters', () => {
    fc.assert(fc.property(good, (s) => isValidName(s) && identityFromClaims({ sub: s, organizations: [s] }).subject === s));
  });
  it('refuses every name containing whitespace or #', () => {
    fc.assert(
      fc.property(good, fc.constantFrom(' ', '\t', '\n', '#', '\u00a0'), good, (a, bad, b) => {
        const s = (a + bad + b).slice(0, 200);
        return !s.includes(bad) || !isValidName(s);
      }),
    );
  });
});
