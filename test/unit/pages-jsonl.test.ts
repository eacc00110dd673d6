import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { formatPagesJsonl, PagesJsonlError, parsePagesJsonl, type PageEntry } from '../../src/domain/pages-jsonl.ts';

const HEADER = '{"format":"json-pages-1.0","id":"pages","title":"All Pages"}';

describe('parsePagesJsonl', () => {
  it('reads the header and the pages after it', () => {
    const input = [
      HEADER,
      '{"id":"p1","url":"https://example.com/","title":"Example","text":"Hello world","ts":"2024-05-01T00:00:00Z"}',
      '{"url":"https://example.jp/","title":"日本語","text":"東京タワーの夜景"}',
      '',
    ].join('\n');
    const parsed = parsePagesJsonl(input);
    expect(parsed.header).toEqual({ format: 'json-pages-1.0', id: 'pages', title: 'All Pages' });
    expect(parsed.pages).toEqual([
      { id: 'p1', url: 'https://example.com/', title: 'Example', text: 'Hello world', ts: '2024-05-01T00:00:00Z' },
      { url: 'https://example.jp/', title: '日本語', text: '東京タワーの夜景' },
    ]);
  });

  it('keeps an absent text apart from an empty one', () => {
    const parsed = parsePagesJsonl([HEADER, '{"url":"https://a/","text":""}', '{"url":"https://b/"}', '{"url":"https://c/","text":null}'].join('\n'));
    expect(parsed.pages[0]).toEqual({ url: 'https://a/', text: '' });
    expect(parsed.pages[1]).toEqual({ url: 'https://b/' });
    expect('text' in parsed.pages[1]!).toBe(false);
    expect('text' in parsed.pages[2]!).toBe(false);
  });

  it("carries a page line's textWithheld (an empty one means nothing was withheld)", () => {
    const parsed = parsePagesJsonl(
      [HEADER, '{"url":"https://a/","text":"","textWithheld":"url-policy"}', '{"url":"https://b/","text":"","textWithheld":""}'].join('\n'),
    );
    expect(parsed.pages).toEqual([
      { url: 'https://a/', text: '', textWithheld: 'url-policy' },
      { url: 'https://b/', text: '' },
    ]);
    expect(() => parsePagesJsonl([HEADER, '{"url":"https://a/","textWithheld":true}'].join('\n'))).toThrow(/line 2: textWithheld is not a string/);
  });

  it('takes title and text exactly as written (no trimming, no unescaping beyond JSON)', () => {
    const text = '  line one\nline two\t<b>not html</b>  ';
    const parsed = parsePagesJsonl(HEADER + '\n' + JSON.stringify({ url: 'https://x/', title: ' T ', text }));
    expect(parsed.pages[0]!.text).toBe(text);
    expect(parsed.pages[0]!.title).toBe(' T ');
  });

  it('accepts a header with no pages, CRLF endings, blank lines and a BOM', () => {
    expect(parsePagesJsonl(HEADER).pages).toEqual([]);
    expect(parsePagesJsonl(HEADER + '\n').pages).toEqual([]);
    const parsed = parsePagesJsonl('\ufeff' + HEADER + '\r\n\r\n{"url":"https://a/"}\r\n');
    expect(parsed.pages).toEqual([{ url: 'https://a/' }]);
  });

  it('refuses a file whose first line is not the header', () => {
    expect(() => parsePagesJsonl('{"url":"https://a/"}\n' + HEADER)).toThrow(PagesJsonlError);
    expect(() => parsePagesJsonl('{"url":"https://a/"}')).toThrow(/line 1: the first line must be the header/);
    expect(() => parsePagesJsonl('{"format":"csv"}')).toThrow(/line 1/);
  });

  it('refuses an empty file', () => {
    expect(() => parsePagesJsonl('')).toThrow(/no header line/);
    expect(() => parsePagesJsonl('\n\n')).toThrow(/no header line/);
  });

  it('names the line of a malformed page', () => {
    expect(() => parsePagesJsonl([HEADER, '{"url":"https://a/"}', '{not json'].join('\n'))).toThrow(/line 3: not JSON/);
    expect(() => parsePagesJsonl([HEADER, '[1,2]'].join('\n'))).toThrow(/line 2: not a JSON object/);
    expect(() => parsePagesJsonl([HEADER, '{"title":"no url"}'].join('\n'))).toThrow(/line 2: page has no url/);
    expect(() => parsePagesJsonl([HEADER, '{"url":""}'].join('\n'))).toThrow(/line 2: page has no url/);
    expect(() => parsePagesJsonl([HEADER, '{"url":"https://a/","text":42}'].join('\n'))).toThrow(/line 2: text is not a string/);
    expect(() => parsePagesJsonl([HEADER, '{"url":"https://a/","title":["x"]}'].join('\n'))).toThrow(/line 2: title is not a string/);
    try {
      parsePagesJsonl([HEADER, '', '{"url":1}'].join('\n'));
      expect.unreachable();
    } catch (err) {
      expect(err).toBeInstanceOf(PagesJsonlError);
      expect((err as PagesJsonlError).line).toBe(3);
    }
  });

  it('round-trips whatever a writer formats (property)', () => {
    const page: fc.Arbitrary<PageEntry> = fc.record(
      {
        url: fc.webUrl(),
        title: fc.string({ unit: 'grapheme' }),
        text: fc.string({ unit: 'grapheme', maxLength: 200 }),
        ts: fc.date({ noInvalidDate: true }).map((d) => d.toISOString()),
        id: fc.uuid(),
        textWithheld: fc.constantFrom('url-policy', 'content-type', 'no-archive', 'deny', 'unattributed'),
      },
      { requiredKeys: ['url'] },
    );
    fc.assert(
      fc.property(fc.array(page, { maxLength: 20 }), (pages) => {
        const parsed = parsePagesJsonl(formatPagesJsonl(pages));
        expect(parsed.pages).toEqual(pages);
        expect(parsed.header.format).toBe('json-pages-1.0');
      }),
    );
  });
});
