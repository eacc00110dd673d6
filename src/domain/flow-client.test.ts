import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { basicAuthorization, parseBasicAuthorization } from './flow-client.ts';

describe('client_secret_basic', () => {
  it('any id and secret survive the header, colons and non-ASCII included', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme', maxLength: 40 }), fc.string({ unit: 'grapheme', maxLength: 80 }), (id, secret) => {
        expect(parseBasicAuthorization(basicAuthorization({ id, secret }))).toEqual({ id, secret });
      }),
    );
  });

  it('reads the RFC 6749 example (form-encoded before base64)', () => {
    // s6BhdRkqt3:7Fjfp0ZBr1KtDRbnfVdmIw from RFC 6749 §2.3.1
    expect(parseBasicAuthorization('Basic czZCaGRSa3F0Mzo3RmpmcDBaQnIxS3REUmJuZlZkbUl3')).toEqual({ id: 's6BhdRkqt3', secret: '7Fjfp0ZBr1KtDRbnfVdmIw' });
  });

  it.each<[string | undefined, undefined | null]>([
    [undefined, undefined],
    ['Bearer abc', undefined],
    ['Basicabc', undefined],
    ['Basic', null],
    ['Basic !!!', null],
    [`Basic ${Buffer.from('no-colon').toString('base64')}`, null],
    [`Basic ${Buffer.from('%E0%A4%A:x').toString('base64')}`, null],
  ])('%j → %j', (header, expected) => {
    expect(parseBasicAuthorization(header)).toBe(expected);
  });
});
