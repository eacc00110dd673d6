// The capture's own replay: a fresh context in the same browser, every request answered from the
// exchanges just recorded and from nothing else (no network at all: what was not recorded is
// aborted and counted as a miss), the page loaded at its final address, left to settle as the
// capture was, then screenshotted and read. Compared with the live page's screenshot and text it
// gives the capture's score (src/domain/qa.ts). A subresource's recorded redirect chain is
// followed here, as the recorder followed it, and the browser gets its last response.
import type { BrowserContext, Route } from 'playwright-core';
import { QA_PIXEL_TOLERANCE, textSimilarity, type QaScore } from '../../domain/qa.ts';
import type { HttpExchange } from '../../domain/wacz/warc.ts';
import type { CaptureBrowser } from './launch.ts';
import { fulfilHeaders, MAX_REDIRECTS, redirectTarget } from './recorder.ts';

/** The replay settles as the capture did: quiet this long after load, or at most QUIET_MAX_MS. */
const QUIET_MS = 50;
const QUIET_MAX_MS = 2000;
/** misses named in the score (all are counted) */
const MISSES_NAMED = 10;

export interface ReplayCheckInput {
  exchanges: readonly HttpExchange[];
  finalUrl: string;
  userAgent: string;
  /** the live page's viewport screenshot (png) and its visible text */
  liveShot: Buffer;
  liveText: string;
  /** the check gives up after this long and scores what it has */
  deadlineMs: number;
}

const withoutFragment = (u: string): string => u.split('#')[0]!;

/** By method and URL, the first recorded exchange (a redirect hop's next request is found the same way). */
function recorded(exchanges: readonly HttpExchange[]): Map<string, HttpExchange> {
  const byKey = new Map<string, HttpExchange>();
  for (const x of exchanges) {
    const key = `${x.request.method} ${withoutFragment(x.url)}`;
    if (!byKey.has(key)) byKey.set(key, x);
  }
  return byKey;
}

/**
 * The recorded answer to `method url`, following recorded redirects as the recorder followed them
 * (its redirectTarget; 307 and 308 keep the method, the others become GET); undefined when any hop
 * is missing.
 */
function answerOf(byKey: Map<string, HttpExchange>, method: string, url: string): HttpExchange | undefined {
  let x = byKey.get(`${method} ${withoutFragment(url)}`);
  for (let hop = 0; x !== undefined && hop < MAX_REDIRECTS; hop++) {
    const next = redirectTarget(x);
    if (next === undefined) return x;
    if (x.response.status !== 307 && x.response.status !== 308 && method !== 'HEAD') method = 'GET';
    x = byKey.get(`${method} ${next}`);
  }
  return x;
}

export async function replayCheck(browser: CaptureBrowser, input: ReplayCheckInput): Promise<QaScore> {
  const byKey = recorded(input.exchanges);
  const missed: string[] = [];
  let misses = 0;
  let inFlight = 0;
  let lastEnded = Date.now();
  const serve = async (route: Route): Promise<void> => {
    inFlight++;
    try {
      const request = route.request();
      // the document's own redirects were followed live: the replay starts at the final address
      const x = answerOf(byKey, request.method(), request.url());
      if (x === undefined) {
        misses++;
        if (missed.length < MISSES_NAMED) missed.push(request.url().slice(0, 2048));
        await route.abort('blockedbyclient').catch(() => {});
        return;
      }
      await route.fulfill({ status: x.response.status, headers: fulfilHeaders(x.response.headers), body: x.response.body }).catch(() => {});
    } finally {
      inFlight--;
      lastEnded = Date.now();
    }
  };
  let context: BrowserContext | undefined;
  const timer = setTimeout(() => void context?.close().catch(() => {}), input.deadlineMs);
  try {
    context = await browser.newContext({ userAgent: input.userAgent });
    await context.route('**/*', serve);
    const page = await context.newPage();
    page.on('dialog', (d) => void d.dismiss().catch(() => {}));
    await page.goto(input.finalUrl, { waitUntil: 'load', timeout: input.deadlineMs }).catch(() => undefined);
    const until = Date.now() + QUIET_MAX_MS;
    while (Date.now() < until && (inFlight > 0 || Date.now() - lastEnded < QUIET_MS)) await page.waitForTimeout(QUIET_MS);
    const shot = await page.screenshot({ type: 'png' });
    const text = await page.evaluate(() => document.body?.innerText ?? '');
    const compare = await context.newPage();
    const pixels = await compare.evaluate(samePixels, { a: input.liveShot.toString('base64'), b: shot.toString('base64'), tolerance: QA_PIXEL_TOLERANCE });
    return { pixels, text: textSimilarity(input.liveText, text), misses, missed };
  } catch {
    // a replay that could not be loaded, shot or read at all replays nothing
    return { pixels: 0, text: 0, misses, missed };
  } finally {
    clearTimeout(timer);
    await context?.close().catch(() => {});
  }
}

/** Runs in a blank page: the share of pixels of two PNGs equal within `tolerance` per channel (a size difference counts as different). */
async function samePixels({ a, b, tolerance }: { a: string; b: string; tolerance: number }): Promise<number> {
  const decode = async (b64: string): Promise<ImageData> => {
    const bytes = Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
    const bitmap = await createImageBitmap(new Blob([bytes], { type: 'image/png' }));
    const canvas = new OffscreenCanvas(bitmap.width, bitmap.height);
    const g = canvas.getContext('2d')!;
    g.drawImage(bitmap, 0, 0);
    return g.getImageData(0, 0, bitmap.width, bitmap.height);
  };
  const [x, y] = await Promise.all([decode(a), decode(b)]);
  const width = Math.max(x.width, y.width);
  const height = Math.max(x.height, y.height);
  let same = 0;
  for (let row = 0; row < Math.min(x.height, y.height); row++) {
    for (let col = 0; col < Math.min(x.width, y.width); col++) {
      const i = (row * x.width + col) * 4;
      const j = (row * y.width + col) * 4;
      if (
        Math.abs(x.data[i]! - y.data[j]!) <= tolerance &&
        Math.abs(x.data[i + 1]! - y.data[j + 1]!) <= tolerance &&
        Math.abs(x.data[i + 2]! - y.data[j + 2]!) <= tolerance
      )
        same++;
    }
  }
  return width * height === 0 ? 0 : same / (width * height);
}
