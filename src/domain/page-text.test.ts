import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { capPageText, MAX_PAGE_TEXT_BYTES, MAX_PAGE_TITLE_BYTES, truncationNote, utf8Prefix } from './page-text.ts';

// every kind of code unit: ASCII, 2- and 3-byte BMP, astral pairs, and lone surrogates
const unit = fc.oneof(fc.constantFrom('a', 'é', '東', '😀', '\ud800', '\udc00', '\n', '"'), fc.string({ unit: 'binary', maxLength: 4 }));
const text = fc.array(unit, { maxLength: 60 }).map((parts) => parts.join(''));

describe('utf8Prefix', () => {
  it('is the longest prefix that fits, never splitting a character', () => {
    fc.assert(
      fc.property(text, fc.nat(80), (s, max) => {
        const p = utf8Prefix(s, max);
        expect(s.startsWith(p)).toBe(true);
        expect(Buffer.byteLength(p)).toBeLessThanOrEqual(max);
        if (Buffer.byteLength(s) <= max) expect(p).toBe(s);
        else {
          // the next character (a whole pair when it is one) would not fit
          const next = s.codePointAt(p.length)!;
          const nextUnits = next > 0xffff ? 2 : 1;
          expect(Buffer.byteLength(s.slice(0, p.length + nextUnits))).toBeGreaterThan(max);
          // and no pair is cut in two
          const last = p.charCodeAt(p.length - 1);
          if (last >= 0xd800 && last <= 0xdbff) expect(s.charCodeAt(p.length) >= 0xdc00 && s.charCodeAt(p.length) <= 0xdfff).toBe(false);
        }
      }),
    );
  });

  it('cuts 60 MiB to the cap', () => {
    const huge = 'x'.repeat(60 * 1024 * 1024);
    expect(utf8Prefix(huge, MAX_PAGE_TEXT_BYTES)).toHaveLength(MAX_PAGE_TEXT_BYTES);
    expect(utf8Prefix('東'.repeat(400_000), MAX_PAGE_TEXT_BYTES)).toHaveLength(333_333);
  });
});

describe('capPageText', () => {
  it('leaves a page within both caps as it is, without a note', () => {
    expect(capPageText({ text: 'hello', title: 'Hi' })).toEqual({ text: 'hello', title: 'Hi' });
    expect(capPageText({ text: '', title: undefined })).toEqual({ text: '', title: undefined });
  });

  it('cuts text and title to their caps and notes their original UTF-8 lengths', () => {
    const r = capPageText({ text: 'é'.repeat(MAX_PAGE_TEXT_BYTES), title: 'T'.repeat(MAX_PAGE_TITLE_BYTES + 1) });
    expect(Buffer.byteLength(r.text)).toBe(MAX_PAGE_TEXT_BYTES);
    expect(r.title).toHaveLength(MAX_PAGE_TITLE_BYTES);
    expect(r.truncated).toEqual({ text: 2 * MAX_PAGE_TEXT_BYTES, title: MAX_PAGE_TITLE_BYTES + 1 });
  });

  it('takes the original length from an earlier cut, even when what is left fits', () => {
    expect(capPageText({ text: 'short', title: 'T' }, { text: 62_914_560 })).toEqual({ text: 'short', title: 'T', truncated: { text: 62_914_560 } });
  });
});

describe('truncationNote', () => {
  it('keeps non-negative integer lengths only', () => {
    expect(truncationNote({ text: 62_914_560 })).toEqual({ text: 62_914_560 });
    expect(truncationNote({ text: 5, title: 7, other: 1 })).toEqual({ text: 5, title: 7 });
    for (const bad of [undefined, null, 'x', [], {}, { text: -1 }, { text: 1.5 }, { text: '9' }, { title: Number.MAX_VALUE }])
      expect(truncationNote(bad)).toBeUndefined();
  });
});
