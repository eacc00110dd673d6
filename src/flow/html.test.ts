import { describe, expect, it } from 'vitest';
import { decodeHtml, extractPage, headerNoArchive, isHtml } from './html.ts';

const BASE = 'http://127.0.0.2:4000/dir/page.html';

describe('extractPage: title', () => {
  it('takes the first <title>, whitespace collapsed, entities decoded', () => {
    expect(extractPage('<html><head><title>\n  A &amp; B\n  C </title><title>second</title></head><body>x</body></html>', BASE).title).toBe('A & B C');
  });
  it('is undefined without a <title>, and empty for an empty one', () => {
    expect(extractPage('<p>x</p>', BASE).title).toBeUndefined();
    expect(extractPage('<title></title><p>x</p>', BASE).title).toBe('');
  });
});

describe('extractPage: visible text', () => {
  it('leaves out script, style, noscript, template and the head', () => {
    const html = '<html><head><title>T</title><style>p{}</style><script>var x=1</script></head><body>One <script>evil()</script><style>.a{}</style><noscript>nojs</noscript><template>tpl</template>Two</body></html>';
    expect(extractPage(html, BASE).text).toBe('One Two');
  });
  it('leaves out hidden elements', () => {
    expect(extractPage('<body><p>a</p><div hidden>secret</div><span style="display: none">nope</span><p>b</p></body>', BASE).text).toBe('a\n\nb');
  });
  it('puts block elements on their own lines, paragraphs and headings a blank line apart, and <br> as a break', () => {
    const html = '<body><h1>Title</h1><p>first   para\n with  spaces</p><div>div<br>next</div><ul><li>one</li><li>two</li></ul></body>';
    expect(extractPage(html, BASE).text).toBe('Title\n\nfirst para with spaces\n\ndiv\nnext\none\ntwo');
  });
  it('keeps inline runs together and spaces between words', () => {
    expect(extractPage('<body><p>Hello <b>bold</b><i>italic</i> <a href="/x">link</a>.</p></body>', BASE).text).toBe('Hello bolditalic link.');
  });
  it('keeps whitespace in <pre>', () => {
    expect(extractPage('<body><pre>a  b\n  c</pre></body>', BASE).text).toBe('a  b\n  c');
  });
  it('separates table cells by tabs and rows by lines', () => {
    expect(extractPage('<table><tr><td>a</td><td>b</td></tr><tr><td>c</td><td>d</td></tr></table>', BASE).text).toBe('a\tb\nc\td');
  });
  it('decodes entities and keeps non-ASCII text', () => {
    expect(extractPage('<body><p>caf&eacute; &lt;tag&gt; 日本語</p></body>', BASE).text).toBe('café <tag> 日本語');
  });
  it('is empty for a page without text', () => {
    expect(extractPage('<html><head><title>t</title></head><body>  </body></html>', BASE).text).toBe('');
  });
  it('survives unclosed and misnested tags', () => {
    expect(extractPage('<body><p>one<p>two<div>three</span></body>', BASE).text).toBe('one\n\ntwo\n\nthree');
  });
});

describe('extractPage: links', () => {
  it('lists every <a href> with rel as found, resolved against the final URL, fragments kept', () => {
    const html = '<body><a href="a.html">a</a><a href="/b" rel="nofollow">b</a><a href="#top">top</a><a href="http://other.test/x?y=1#f" rel="NoFollow Noopener">x</a><a>no href</a><a href=" c.html ">c</a></body>';
    expect(extractPage(html, BASE).links).toEqual([
      { href: 'http://127.0.0.2:4000/dir/a.html' },
      { href: 'http://127.0.0.2:4000/b', rel: 'nofollow' },
      { href: 'http://127.0.0.2:4000/dir/page.html#top' },
      { href: 'http://other.test/x?y=1#f', rel: 'NoFollow Noopener' },
      { href: 'http://127.0.0.2:4000/dir/c.html' },
    ]);
  });
  it('keeps non-http links (the ledger decides) and drops hrefs that are not URLs', () => {
    expect(extractPage('<a href="mailto:a@b.test">m</a><a href="http://[bad">bad</a>', BASE).links).toEqual([{ href: 'mailto:a@b.test' }]);
  });
  it('resolves against <base href> as a browser does', () => {
    expect(extractPage('<head><base href="/other/"></head><a href="x">x</a>', BASE).links).toEqual([{ href: 'http://127.0.0.2:4000/other/x' }]);
  });
  it('finds links inside hidden elements too (they are in the document)', () => {
    expect(extractPage('<div hidden><a href="/h">h</a></div>', BASE).links).toEqual([{ href: 'http://127.0.0.2:4000/h' }]);
  });
});

describe('noarchive', () => {
  it('reads <meta name="robots" content="noarchive"> and "none"', () => {
    expect(extractPage('<meta name="robots" content="index, NoArchive">', BASE).noArchive).toBe(true);
    expect(extractPage('<meta name="ROBOTS" content="none">', BASE).noArchive).toBe(true);
    expect(extractPage('<meta name="robots" content="nofollow">', BASE).noArchive).toBe(false);
  });
  it('reads X-Robots-Tag, optionally scoped to our agent', () => {
    expect(headerNoArchive(['noarchive'], 'capture-ledger-flow')).toBe(true);
    expect(headerNoArchive(['capture-ledger-flow: noarchive'], 'capture-ledger-flow')).toBe(true);
    expect(headerNoArchive(['googlebot: noarchive'], 'capture-ledger-flow')).toBe(false);
    expect(headerNoArchive(['noindex, nofollow'], 'capture-ledger-flow')).toBe(false);
    expect(headerNoArchive([], 'capture-ledger-flow')).toBe(false);
  });
});

describe('decodeHtml and isHtml', () => {
  it('uses the Content-Type charset, then a <meta charset>, else utf-8', () => {
    expect(decodeHtml(Buffer.from([0x63, 0x61, 0x66, 0xe9]), 'text/html; charset=iso-8859-1')).toBe('café');
    expect(decodeHtml(Buffer.concat([Buffer.from('<meta charset="windows-1252">'), Buffer.from([0xe9])]), 'text/html')).toBe('<meta charset="windows-1252">é');
    expect(decodeHtml(Buffer.from('日本'), undefined)).toBe('日本');
    expect(decodeHtml(Buffer.from('x'), 'text/html; charset=bogus-label')).toBe('x');
  });
  it('knows HTML media types', () => {
    expect(isHtml('text/html; charset=utf-8')).toBe(true);
    expect(isHtml('application/xhtml+xml')).toBe(true);
    expect(isHtml('application/pdf')).toBe(false);
    expect(isHtml(undefined)).toBe(false);
  });
});
