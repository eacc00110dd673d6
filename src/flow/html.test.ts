import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { headerNoArchive, isHtml } from './html.ts';

describe('X-Robots-Tag noarchive', () => {
  it('reads noarchive and none, optionally scoped to our agent', () => {
    expect(headerNoArchive(['noarchive'], 'capture-ledger-flow')).toBe(true);
    expect(headerNoArchive(['None'], 'capture-ledger-flow')).toBe(true);
    expect(headerNoArchive(['capture-ledger-flow: noarchive'], 'capture-ledger-flow')).toBe(true);
    expect(headerNoArchive(['googlebot: noarchive'], 'capture-ledger-flow')).toBe(false);
    expect(headerNoArchive(['noindex, nofollow'], 'capture-ledger-flow')).toBe(false);
    expect(headerNoArchive([], 'capture-ledger-flow')).toBe(false);
  });
  it('an unscoped noarchive among any other values and directives always withholds', () => {
    const directive = fc.constantFrom('noindex', 'nofollow', 'all', 'nosnippet', 'notranslate', 'max-snippet: 10');
    fc.assert(
      fc.property(
        fc.array(
          fc.array(directive, { maxLength: 3 }).map((d) => d.join(', ')),
          { maxLength: 3 },
        ),
        fc.nat(),
        (others, at) => {
          const values = [...others];
          values.splice(at % (values.length + 1), 0, others.length > 0 ? `${others[0]}, NOARCHIVE` : 'noarchive');
          expect(headerNoArchive(values, 'capture-ledger-flow')).toBe(true);
          expect(headerNoArchive(others, 'capture-ledger-flow')).toBe(false);
        },
      ),
    );
  });
});

describe('isHtml', () => {
  it('knows HTML media types', () => {
    expect(isHtml('text/html; charset=utf-8')).toBe(true);
    expect(isHtml('TEXT/HTML')).toBe(true);
    expect(isHtml('application/xhtml+xml')).toBe(true);
    expect(isHtml('application/pdf')).toBe(false);
    expect(isHtml(undefined)).toBe(false);
  });
});
