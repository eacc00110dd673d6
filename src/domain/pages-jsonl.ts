// pages/pages.jsonl inside a WACZ: a header line first, then one JSON object per page. BrowserHive
// writes each page's title and text (document.body.innerText) there, and the search index takes
// them exactly as written — re-deriving them from HTML would let the index disagree with what the
// archive signed for. Pure: no I/O.

export interface PagesHeader {
  /** "json-pages-1.0" */
  format: string;
  id?: string;
  title?: string;
  [key: string]: unknown;
}

export interface PageEntry {
  url: string;
  /** absent when the page line carries none — kept apart from an empty title */
  title?: string;
  /** absent when the page line carries none — kept apart from an empty text */
  text?: string;
  ts?: string;
  id?: string;
  /** why the capturer did not keep this page's text (BrowserHive's DocumentWithheld), when the line says */
  textWithheld?: string;
}

export interface ParsedPages {
  header: PagesHeader;
  pages: PageEntry[];
}

export class PagesJsonlError extends Error {
  override name = 'PagesJsonlError';
  readonly line: number;
  constructor(line: number, reason: string) {
    super(`pages.jsonl line ${line}: ${reason}`);
    this.line = line;
  }
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function optionalString(obj: Record<string, unknown>, key: string, line: number): string | undefined {
  const v = obj[key];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'string') throw new PagesJsonlError(line, `${key} is not a string`);
  return v;
}

/**
 * Parses the whole file. The first non-blank line must be the header ({"format": "json-pages-…"});
 * every later non-blank line must be a page object with a string url. Blank lines (including the
 * trailing newline) are ignored; a CRLF line ending is accepted. Anything else throws
 * PagesJsonlError naming the 1-based line, so a malformed archive is reported rather than
 * silently indexed as fewer pages.
 */
export function parsePagesJsonl(input: string): ParsedPages {
  const source = input.charCodeAt(0) === 0xfeff ? input.slice(1) : input;
  const lines = source.split('\n');
  let header: PagesHeader | undefined;
  const pages: PageEntry[] = [];
  for (let i = 0; i < lines.length; i++) {
    const lineNo = i + 1;
    const raw = lines[i]!.endsWith('\r') ? lines[i]!.slice(0, -1) : lines[i]!;
    if (raw.trim() === '') continue;
    let value: unknown;
    try {
      value = JSON.parse(raw);
    } catch (err) {
      throw new PagesJsonlError(lineNo, `not JSON (${(err as Error).message})`);
    }
    if (!isObject(value)) throw new PagesJsonlError(lineNo, 'not a JSON object');
    if (header === undefined) {
      const format = value.format;
      if (typeof format !== 'string' || !format.startsWith('json-pages-')) {
        throw new PagesJsonlError(lineNo, 'the first line must be the header with "format": "json-pages-1.0"');
      }
      header = value as PagesHeader;
      continue;
    }
    const url = value.url;
    if (typeof url !== 'string' || url === '') throw new PagesJsonlError(lineNo, 'page has no url');
    const page: PageEntry = { url };
    const title = optionalString(value, 'title', lineNo);
    const text = optionalString(value, 'text', lineNo);
    const ts = optionalString(value, 'ts', lineNo);
    const id = optionalString(value, 'id', lineNo);
    const textWithheld = optionalString(value, 'textWithheld', lineNo);
    if (title !== undefined) page.title = title;
    if (text !== undefined) page.text = text;
    if (ts !== undefined) page.ts = ts;
    if (id !== undefined) page.id = id;
    if (textWithheld !== undefined && textWithheld !== '') page.textWithheld = textWithheld;
    pages.push(page);
  }
  if (header === undefined) throw new PagesJsonlError(1, 'empty: no header line');
  return { header, pages };
}

/** The inverse, for writers and tests: header line, then one line per page, newline-terminated. */
export function formatPagesJsonl(pages: PageEntry[], header: PagesHeader = { format: 'json-pages-1.0', id: 'pages', title: 'All Pages' }): string {
  return [header, ...pages].map((v) => JSON.stringify(v)).join('\n') + '\n';
}
