// How much of a page's text and title is kept: when the flow captures it (pages/pages.jsonl) and
// again when the indexer reads it (a WACZ may come from another capturer). Page script can make
// innerText any size from a few bytes of source (60 MiB became a 62 KB WACZ), so nothing
// downstream may trust its length. Pure: no I/O.

/**
 * The text cap, in UTF-8 bytes. OpenSearch's highlighter analyses at most
 * index.highlight.max_analyzed_offset (1,000,000) characters of a field and fails the whole
 * search past that; a UTF-16 string never has more code units than its UTF-8 bytes, so text
 * capped at 1,000,000 bytes is always highlightable (measured on the stack's OpenSearch 2.19:
 * 1,000,000 characters highlight, 1,000,001 fail the search). A book-length page (about 150,000
 * words) fits, and a capped page's document fits one bulk request (src/search/bulk-batches.ts).
 */
export const MAX_PAGE_TEXT_BYTES = 1_000_000;
/** The title cap, in UTF-8 bytes: far past any title a browser shows (1,365 CJK characters). */
export const MAX_PAGE_TITLE_BYTES = 4096;

const encoder = new TextEncoder();

/**
 * The longest prefix of `text` whose UTF-8 encoding is at most `maxBytes`, never splitting a
 * character (a surrogate pair stays whole; a lone surrogate counts as the 3 bytes of U+FFFD, as
 * Buffer.byteLength counts it). `text` itself when it fits. Reads at most `maxBytes` of the input.
 */
export function utf8Prefix(text: string, maxBytes: number): string {
  // each UTF-16 code unit is at most 3 UTF-8 bytes
  if (text.length * 3 <= maxBytes) return text;
  const { read } = encoder.encodeInto(text, new Uint8Array(maxBytes));
  return read === text.length ? text : text.slice(0, read);
}

/** Original UTF-8 lengths of what was cut: the manifest's `truncated`. */
export interface TextTruncation {
  text?: number;
  title?: number;
}

export interface CappedPage {
  text: string;
  title: string | undefined;
  /** absent when nothing was cut */
  truncated?: TextTruncation;
}

/**
 * Text and title cut to their caps. `originalBytes` are the UTF-8 lengths before an earlier,
 * coarser cut (the browser hands over at most the first MAX_PAGE_TEXT_BYTES code units), when
 * there was one; otherwise they are measured here.
 */
export function capPageText(page: { text: string; title: string | undefined }, originalBytes: TextTruncation = {}): CappedPage {
  const text = utf8Prefix(page.text, MAX_PAGE_TEXT_BYTES);
  const title = page.title === undefined ? undefined : utf8Prefix(page.title, MAX_PAGE_TITLE_BYTES);
  const truncated: TextTruncation = {};
  if (originalBytes.text !== undefined || text !== page.text) truncated.text = originalBytes.text ?? Buffer.byteLength(page.text);
  if (originalBytes.title !== undefined || title !== page.title) truncated.title = originalBytes.title ?? Buffer.byteLength(page.title!);
  return truncated.text === undefined && truncated.title === undefined ? { text, title } : { text, title, truncated };
}

/** A manifest's `truncated` as the ledger keeps it: only non-negative integer lengths; undefined when none. */
export function truncationNote(v: unknown): TextTruncation | undefined {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return undefined;
  const note: TextTruncation = {};
  for (const key of ['text', 'title'] as const) {
    const n = (v as Record<string, unknown>)[key];
    if (typeof n === 'number' && Number.isSafeInteger(n) && n >= 0) note[key] = n;
  }
  return note.text === undefined && note.title === undefined ? undefined : note;
}
