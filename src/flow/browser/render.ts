// What a loaded page is turned into besides its WARC records, read from the live page: title,
// innerText, links from the rendered DOM, the noarchive meta, and the html / png / webp / mhtml
// artifacts. Screenshots are 1280 px wide (the viewport) and as tall as the page up to a cap.
import type { BrowserContext, Page } from 'playwright-core';
import type { CaptureFormat } from '../../domain/contract.ts';
import type { ManifestLink } from '../../domain/contract.ts';
import { capPageText, MAX_PAGE_TEXT_BYTES, MAX_PAGE_TITLE_BYTES, type TextTruncation } from '../../domain/page-text.ts';
import { VIEWPORT } from './launch.ts';

export const MAX_LINKS = 10_000;
export const SCREENSHOT_MAX_HEIGHT = 10_000;

export interface RenderedPage {
  title: string | undefined;
  /** document.body.innerText, cut to MAX_PAGE_TEXT_BYTES of UTF-8 (the title to MAX_PAGE_TITLE_BYTES) */
  text: string;
  /** the UTF-8 lengths of text and title before they were cut; absent when nothing was */
  truncated?: TextTruncation;
  /** a[href] and area[href] in document order, resolved against document.baseURI, fragment kept */
  links: ManifestLink[];
  /** links past MAX_LINKS, not kept */
  linksDropped: number;
  /** <meta name="robots" content="noarchive|none"> */
  noArchive: boolean;
}

interface PageRead {
  title: string | null;
  text: string;
  /** UTF-8 lengths of title and text when the page cut them (longer than the caps in code units) */
  titleBytes?: number;
  textBytes?: number;
  links: { href: string; rel?: string }[];
  total: number;
  noArchive: boolean;
}

/**
 * Runs in the page: must not close over anything. Hands over at most `textUnits` / `titleUnits`
 * UTF-16 code units: page script can make innerText any size, and a prefix of that many code units
 * holds every prefix of that many UTF-8 bytes, which capPageText then cuts exactly.
 */
function readPage({ max, textUnits, titleUnits }: { max: number; textUnits: number; titleUnits: number }): PageRead {
  // no named helpers in here: the page gets this function's source, and a bundler's name-keeping
  // wrapper around a named one would not exist there
  const noArchive = Array.from(document.querySelectorAll('meta[name]')).some((m) => {
    if ((m.getAttribute('name') ?? '').toLowerCase() !== 'robots') return false;
    const tokens = (m.getAttribute('content') ?? '')
      .toLowerCase()
      .split(',')
      .map((s) => s.trim());
    return tokens.includes('noarchive') || tokens.includes('none');
  });
  const anchors = Array.from(document.querySelectorAll('a[href], area[href]'));
  const links: { href: string; rel?: string }[] = [];
  for (const a of anchors) {
    if (links.length >= max) break;
    let href: string;
    try {
      href = new URL((a.getAttribute('href') ?? '').trim(), document.baseURI).href;
    } catch {
      continue;
    }
    const rel = a.getAttribute('rel');
    links.push(rel === null ? { href } : { href, rel });
  }
  const title = document.querySelector('title') !== null ? document.title : null;
  const text = document.body ? document.body.innerText : '';
  const read: PageRead = { title, text, links, total: anchors.length, noArchive };
  if (title !== null && title.length > titleUnits) [read.title, read.titleBytes] = [title.slice(0, titleUnits), new Blob([title]).size];
  if (text.length > textUnits) [read.text, read.textBytes] = [text.slice(0, textUnits), new Blob([text]).size];
  return read;
}

export async function readRendered(page: Page, maxLinks = MAX_LINKS): Promise<RenderedPage> {
  const r = await page.evaluate(readPage, { max: maxLinks, textUnits: MAX_PAGE_TEXT_BYTES, titleUnits: MAX_PAGE_TITLE_BYTES });
  const cut: TextTruncation = {};
  if (r.textBytes !== undefined) cut.text = r.textBytes;
  if (r.titleBytes !== undefined) cut.title = r.titleBytes;
  const capped = capPageText({ text: r.text, title: r.title ?? undefined }, cut);
  return { ...capped, links: r.links, linksDropped: Math.max(0, r.total - maxLinks), noArchive: r.noArchive };
}

export type RenderedArtifacts = Partial<Record<'html' | 'png' | 'webp' | 'mhtml', Buffer>>;

/** The artifacts the formats ask for that come from the live page (wacz and links come from the recording). */
export async function renderArtifacts(
  context: BrowserContext,
  page: Page,
  formats: readonly CaptureFormat[],
  maxHeight = SCREENSHOT_MAX_HEIGHT,
): Promise<RenderedArtifacts> {
  const out: RenderedArtifacts = {};
  if (formats.includes('html')) out.html = Buffer.from(await page.content(), 'utf8');
  const shots = formats.filter((f): f is 'png' | 'webp' => f === 'png' || f === 'webp');
  if (shots.length === 0 && !formats.includes('mhtml')) return out;
  const cdp = await context.newCDPSession(page);
  try {
    if (shots.length > 0) {
      const height = await page.evaluate(() => Math.max(document.documentElement.scrollHeight, document.body ? document.body.scrollHeight : 0));
      const clip = { x: 0, y: 0, width: VIEWPORT.width, height: Math.max(1, Math.min(height, maxHeight)), scale: 1 };
      for (const format of shots) {
        const { data } = await cdp.send('Page.captureScreenshot', { format, clip, captureBeyondViewport: true, fromSurface: true });
        out[format] = Buffer.from(data, 'base64');
      }
    }
    if (formats.includes('mhtml')) {
      const { data } = await cdp.send('Page.captureSnapshot', { format: 'mhtml' });
      out.mhtml = Buffer.from(data, 'utf8');
    }
  } finally {
    await cdp.detach().catch(() => {});
  }
  return out;
}
