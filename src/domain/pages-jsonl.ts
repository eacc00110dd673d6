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

/** One non-blank line as a JSON object, or PagesJsonlError naming it. */
function objectLine(raw: string, lineNo: number): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch (err) {
    throw new PagesJsonlError(lineNo, `not JSON (${(err as Error).message})`);
  }
  if (!isObject(value)) throw new PagesJsonlError(lineNo, 'not a JSON object');
  return value;
}

function headerLine(value: Record<string, unknown>, lineNo: number): PagesHeader {
  const format = value.format;
  if (typeof format !== 'string' || !format.startsWith('json-pages-')) {
    throw new PagesJsonlError(lineNo, 'the first line must be the header with "format": "json-pages-1.0"');
  }
  return value as PagesHeader;
}

const OPTIONAL_FIELDS = ['title', 'text', 'ts', 'id'] as const;

function pageLine(value: Record<string, unknown>, lineNo: number): PageEntry {
  const url = value.url;
  if (typeof url !== 'string' || url === '') throw new PagesJsonlError(lineNo, 'page has no url');
  const page: PageEntry = { url };
  for (const key of OPTIONAL_FIELDS) {
    const v = optionalString(value, key, lineNo);
    if (v !== undefined) page[key] = v;
  }
  const textWithheld = optionalString(value, 'textWithheld', lineNo);
  if (textWithheld !== undefined && textWithheld !== '') page.textWithheld = textWithheld;
  return page;
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
  for (const [i, line] of lines.entries()) {
    const raw = line.endsWith('\r') ? line.slice(0, -1) : line;
    if (raw.trim() === '') continue;
    const value = objectLine(raw, i + 1);
    if (header === undefined) header = headerLine(value, i + 1);
    else pages.push(pageLine(value, i + 1));
  }
  if (header === undefined) throw new PagesJsonlError(1, 'empty: no header line');
  return { header, pages };
}

/** The inverse, for writers and tests: header line, then one line per page, newline-terminated. */
export function formatPagesJsonl(pages: PageEntry[], header: PagesHeader = { format: 'json-pages-1.0', id: 'pages', title: 'All Pages' }): string {
  return [header, ...pages].map((v) => JSON.stringify(v)).join('\n') + '\n';
}
