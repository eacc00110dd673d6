import fc from 'fast-check';
import { extendedEncodeURIComponent } from '@smithy/core/protocols';
import { describe, expect, it } from 'vitest';
import { objectPath } from './object-path.ts';

describe('objectPath', () => {
  it('encodes each key segment as the SDK serializer does, whatever the characters', () => {
    const segment = fc.oneof(
      fc.string({ unit: 'grapheme', maxLength: 12 }),
      fc.stringMatching(/^[A-Za-z0-9\-_.~]{0,12}$/),
      fc.constantFrom('a b', "it's", '(x)', '*', '!', '%41', '+', 'ü', '..'),
    );
    fc.assert(
      fc.property(fc.array(segment, { minLength: 1, maxLength: 5 }), fc.constantFrom('/', '', '/base/', '/base'), (segments, base) => {
        const key = segments.join('/');
        const expected = `${base.replace(/\/+$/, '')}/captures/${key.split('/').map(extendedEncodeURIComponent).join('/')}`;
        expect(objectPath(base, 'captures', key)).toBe(expected);
      }),
      { numRuns: 2000 },
    );
  });
});
