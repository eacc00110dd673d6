// What the capture flow reads out of a page's HTML: the title, the visible text (an approximation
// of document.body.innerText: no script/style/noscript/template/head, hidden elements dropped,
// block elements on their own lines), the <a href> links with their rel as found, and whether the
// page asks not to be archived. Pure: a string in, values out.
import { Parser } from 'htmlparser2';
import type { ManifestLink } from '../domain/contract.ts';

export interface ExtractedPage {
  title: string | undefined;
  text: string;
  links: ManifestLink[];
  /** <meta name="robots" content="noarchive"> (or "none") */
  noArchive: boolean;
}

/** Content is not rendered, so innerText leaves it out. */
const SKIP = new Set(['script', 'style', 'noscript', 'template', 'head', 'title', 'textarea', 'iframe', 'object', 'svg', 'math', 'canvas', 'video', 'audio', 'select', 'datalist']);
const VOID = new Set(['area', 'base', 'br', 'col', 'embed', 'hr', 'img', 'input', 'link', 'meta', 'param', 'source', 'track', 'wbr']);
/** Block-level: a line break before and after. p and headings get a blank line (innerText's 2). */
const BLOCK = new Set(['address', 'article', 'aside', 'blockquote', 'body', 'dd', 'details', 'dialog', 'div', 'dl', 'dt', 'fieldset', 'figcaption', 'figure', 'footer', 'form', 'header', 'hgroup', 'hr', 'li', 'main', 'nav', 'ol', 'pre', 'section', 'summary', 'table', 'tbody', 'thead', 'tfoot', 'tr', 'ul', 'caption', 'legend', 'option']);
const PARAGRAPH = new Set(['p', 'h1', 'h2', 'h3', 'h4', 'h5', 'h6']);

type Piece = { text: string; pre: boolean } | { br: number } | { tab: true };

function isHidden(attrs: Record<string, string>): boolean {
  if ('hidden' in attrs) return true;
  const style = (attrs.style ?? '').toLowerCase().replace(/\s+/g, '');
  return style.includes('display:none') || style.includes('visibility:hidden');
}

function assemble(pieces: Piece[]): string {
  let out = '';
  let pendingBreak = 0;
  let pendingSpace = false;
  let started = false;
  for (const p of pieces) {
    if ('br' in p) {
      pendingBreak = Math.max(pendingBreak, p.br);
      pendingSpace = false;
      continue;
    }
    if ('tab' in p) {
      if (started && pendingBreak === 0) {
        out += '\t';
        pendingSpace = false;
      }
      continue;
    }
    let t = p.pre ? p.text : p.text.replace(/[ \t\n\r\f]+/g, ' ');
    if (!p.pre) {
      if (t.startsWith(' ')) {
        pendingSpace = true;
        t = t.slice(1);
      }
      if (t === '') continue;
    }
    if (started) {
      if (pendingBreak > 0) out += '\n'.repeat(pendingBreak);
      else if (pendingSpace && !out.endsWith('\t') && !out.endsWith('\n') && !out.endsWith(' ')) out += ' ';
    }
    pendingBreak = 0;
    pendingSpace = false;
    if (!p.pre && t.endsWith(' ')) {
      t = t.slice(0, -1);
      pendingSpace = true;
    }
    out += t;
    started = true;
  }
  return out;
}

function resolve(href: string, base: string): string | undefined {
  try {
    return new URL(href.trim(), base).href;
  } catch {
    return undefined;
  }
}

/** Reads one HTML document fetched from (after redirects) `finalUrl`. */
export function extractPage(html: string, finalUrl: string): ExtractedPage {
  const pieces: Piece[] = [];
  const rawLinks: { href: string; rel?: string }[] = [];
  let base: string | undefined;
  let title: string | undefined;
  let inTitle = false;
  let titleText = '';
  let noArchive = false;
  // the open-element stack, each marking whether it hides its content
  const stack: { name: string; hides: boolean }[] = [];
  let hidden = 0;
  let pre = 0;

  const parser = new Parser(
    {
      onopentag(name, attrs) {
        if (name === 'base' && base === undefined && attrs.href !== undefined) base = resolve(attrs.href, finalUrl);
        if (name === 'meta' && (attrs.name ?? '').toLowerCase() === 'robots') {
          const c = (attrs.content ?? '').toLowerCase().split(',').map((s) => s.trim());
          if (c.includes('noarchive') || c.includes('none')) noArchive = true;
        }
        if (name === 'title' && title === undefined && stack.every((s) => s.name !== 'svg')) {
          inTitle = true;
          titleText = '';
        }
        if (name === 'a' && attrs.href !== undefined) {
          const link: { href: string; rel?: string } = { href: attrs.href };
          if (attrs.rel !== undefined) link.rel = attrs.rel;
          rawLinks.push(link);
        }
        if (VOID.has(name)) {
          if (hidden === 0) {
            if (name === 'br') pieces.push({ br: 1 });
            if (name === 'hr') pieces.push({ br: 1 });
          }
          return;
        }
        const hides = SKIP.has(name) || isHidden(attrs);
        stack.push({ name, hides });
        if (hides) hidden++;
        if (hidden > 0) return;
        if (name === 'pre') pre++;
        if (BLOCK.has(name)) pieces.push({ br: 1 });
        if (PARAGRAPH.has(name)) pieces.push({ br: 2 });
        if (name === 'td' || name === 'th') pieces.push({ tab: true });
      },
      ontext(text) {
        if (inTitle) titleText += text;
        if (hidden === 0) pieces.push({ text, pre: pre > 0 });
      },
      onclosetag(name, implied) {
        if (name === 'title' && inTitle) {
          inTitle = false;
          title = titleText.replace(/\s+/g, ' ').trim();
        }
        if (VOID.has(name)) return;
        // pop to the matching open element (htmlparser2 reports implied closes too)
        const at = stack.map((s) => s.name).lastIndexOf(name);
        if (at < 0) return;
        while (stack.length > at) {
          const top = stack.pop()!;
          if (top.hides) hidden--;
          else if (hidden === 0) {
            if (top.name === 'pre') pre--;
            if (BLOCK.has(top.name)) pieces.push({ br: 1 });
            if (PARAGRAPH.has(top.name)) pieces.push({ br: 2 });
          }
        }
        void implied;
      },
    },
    { decodeEntities: true, lowerCaseTags: true, lowerCaseAttributeNames: true },
  );
  parser.write(html);
  parser.end();
  if (inTitle) title = titleText.replace(/\s+/g, ' ').trim();

  const links: ManifestLink[] = [];
  for (const l of rawLinks) {
    const href = resolve(l.href, base ?? finalUrl);
    if (href === undefined) continue;
    links.push(l.rel !== undefined ? { href, rel: l.rel } : { href });
  }
  return { title, text: assemble(pieces), links, noArchive };
}

/** The charset a response declares (Content-Type, else a <meta> in the first 1024 bytes), else utf-8. */
export function decodeHtml(body: Buffer, contentType: string | undefined): string {
  let label = /charset\s*=\s*"?([\w.:-]+)/i.exec(contentType ?? '')?.[1];
  if (label === undefined) {
    const head = body.subarray(0, 1024).toString('latin1');
    label = /<meta[^>]+charset\s*=\s*["']?([\w.:-]+)/i.exec(head)?.[1];
  }
  try {
    return new TextDecoder(label ?? 'utf-8').decode(body);
  } catch {
    return new TextDecoder('utf-8').decode(body);
  }
}

export function isHtml(contentType: string | undefined): boolean {
  const mime = (contentType ?? '').split(';')[0]!.trim().toLowerCase();
  return mime === 'text/html' || mime === 'application/xhtml+xml';
}

/** X-Robots-Tag: noarchive / none (optionally scoped to a user agent: "ua: noarchive"). */
export function headerNoArchive(values: string[], userAgent: string): boolean {
  for (const v of values) {
    let directives = v.toLowerCase();
    const m = /^\s*([a-z0-9_-]+)\s*:(.*)$/.exec(directives);
    if (m && !['noarchive', 'none', 'noindex', 'nofollow', 'all', 'unavailable_after', 'nosnippet', 'max-snippet', 'max-image-preview', 'max-video-preview', 'noimageindex', 'notranslate', 'indexifembedded'].includes(m[1]!)) {
      if (m[1] !== userAgent.toLowerCase()) continue;
      directives = m[2]!;
    }
    const parts = directives.split(',').map((s) => s.trim());
    if (parts.includes('noarchive') || parts.includes('none')) return true;
  }
  return false;
}
