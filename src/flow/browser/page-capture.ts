// One capture in the browser: a fresh context, every request answered by the recorder, the page
// loaded, its requests left to go quiet and the page to linger, the in-page behaviors run for their
// budget (behaviors.ts) and what they asked for left to go quiet, then read (title, text, links)
// and rendered (html, screenshots, mhtml). The host's part ends when the page has been read:
// `hostDoneAt`, from which its pacing delay counts; rendering makes no requests (the recorder
// aborts any). The deadline covers it all: when it fires the context is closed and the capture
// is cancelled.
import { setTimeout as sleep } from 'node:timers/promises';
import type { BrowserContext, Page, Request } from 'playwright-core';
import type { CaptureFormat } from '../../domain/contract.ts';
import type { HttpExchange } from '../../domain/wacz/warc.ts';
import type { Fetcher } from '../fetcher.ts';
import type { CaptureBrowser } from './launch.ts';
import { DEFAULT_RECORDER_LIMITS, MAX_REDIRECTS, Recorder, type MainFailure, type RecorderLimits } from './recorder.ts';
import { behaviorBudgetMs } from '../../domain/behavior-budget.ts';
import { behaviorsScript, runBehaviors, type BehaviorRun, type BehaviorSettings } from './behaviors.ts';
import { breakAnywherePastCap } from './layout-guard.ts';
import { MAX_LINKS, readRendered, renderArtifacts, type RenderedArtifacts, type RenderedPage } from './render.ts';

/** After load, the page is read once its requests have been quiet this long, or after QUIET_MAX_MS. */
const QUIET_MS = 50;
const QUIET_MAX_MS = 2000;

export interface PageCaptureOptions {
  userAgent: string;
  fetcher: Fetcher;
  formats: readonly CaptureFormat[];
  /** the browser lingering on the page after load */
  extraMs: number;
  deadlineMs: number;
  limits?: RecorderLimits;
  maxLinks?: number;
  /** also a png of the viewport as the page was read, for the capture's quality check */
  liveShot?: boolean;
  /** in-page behaviors after load, for up to `seconds` (0 or absent: none, and the library is not injected) */
  behaviors?: BehaviorSettings & { seconds: number };
}

export interface PageCapture {
  /** every exchange the page made, in the order they completed; the main document's hops among them */
  exchanges: HttpExchange[];
  /** the main document's final response */
  main: HttpExchange;
  finalUrl: string;
  page: RenderedPage;
  artifacts: RenderedArtifacts;
  /** aborted: over the resource/byte budget; refused by the address policy; failed on the network */
  dropped: number;
  refused: number;
  failed: number;
  /** the viewport as the page was read (png), when asked for */
  liveShot?: Buffer;
  /** the behaviors' budget (0: none ran: off, or no room left before the deadline) and, when they ran, how it went */
  behaviors: { budgetMs: number; run?: BehaviorRun };
}

export type PageCaptureFailure =
  | { kind: 'cancelled'; message: string; finalUrl?: string }
  | { kind: 'main'; failure: MainFailure; finalUrl?: string }
  | { kind: 'navigation'; message: string; finalUrl?: string }
  /** the loaded document was judged unfit (status, content type, a test knob) */
  | { kind: 'judged'; errorType: string; message: string; finalUrl?: string };

export type PageCaptureResult = ({ ok: true } & PageCapture & { hostDoneAt: number }) | ({ ok: false; hostDoneAt: number } & PageCaptureFailure);

/** Judges the loaded document before the page is lingered on and read; a failure returned ends the capture. */
export type AfterLoad = (main: HttpExchange, finalUrl: string) => PageCaptureFailure | undefined;

export async function capturePage(browser: CaptureBrowser, url: string, opts: PageCaptureOptions, afterLoad?: AfterLoad): Promise<PageCaptureResult> {
  const ac = new AbortController();
  const startedAt = Date.now();
  const behaviors = (opts.behaviors?.seconds ?? 0) > 0 ? opts.behaviors : undefined;
  let context: BrowserContext | undefined;
  let hostDoneAt: number | undefined;
  const cancelled = (): PageCaptureFailure => ({ kind: 'cancelled', message: `capture exceeded its deadline of ${opts.deadlineMs} ms and was torn down` });
  const timer = setTimeout(() => {
    ac.abort(new Error('deadline'));
    void context?.close().catch(() => {});
  }, opts.deadlineMs);
  let recorder: Recorder | undefined;
  const mainHops: HttpExchange[] = [];
  try {
    context = await browser.newContext({ userAgent: opts.userAgent });
    if (ac.signal.aborted) return { ok: false, hostDoneAt: Date.now(), ...cancelled() };
    // the page is opened after the route and the init script are in place: set on the context,
    // they travel with the page's own start-up instead of costing two more round trips each time
    // assigned once newPage resolves; the route may ask isOwn before that, so not a const (TDZ)
    // eslint-disable-next-line prefer-const
    let page: Page | undefined;
    // a worker's or a pop-up's first request has no frame of this page: frame() throws or differs
    const isOwn = (r: Request): boolean => {
      try {
        return page !== undefined && r.frame().page() === page;
      } catch {
        return false;
      }
    };
    const isMain = (r: Request): boolean => {
      try {
        return page !== undefined && r.isNavigationRequest() && r.frame() === page.mainFrame();
      } catch {
        return false;
      }
    };
    recorder = new Recorder({
      fetcher: opts.fetcher,
      limits: opts.limits ?? DEFAULT_RECORDER_LIMITS,
      signal: ac.signal,
      isOwn,
      isMainDocument: isMain,
      onRecord: (x, r) => {
        if (isMain(r)) mainHops.push(x);
      },
    });
    // a page past the links cap gets a break opportunity everywhere (layout-guard.ts)
    await Promise.all([
      context.route('**/*', recorder.handle),
      context.addInitScript(breakAnywherePastCap, opts.maxLinks ?? MAX_LINKS),
      behaviors !== undefined ? context.addInitScript({ content: behaviorsScript() }) : undefined,
    ]);
    const opened = await context.newPage();
    page = opened;
    context.on('page', (p) => {
      if (p !== opened) void p.close().catch(() => {});
    });
    opened.on('dialog', (d) => void d.dismiss().catch(() => {}));

    let response;
    const visited = new Set<string>();
    for (let target = url; ;) {
      visited.add(target.split('#')[0]!);
      let failure: Error | undefined;
      try {
        response = await page.goto(target, { waitUntil: 'load', timeout: 0 });
      } catch (err) {
        failure = err as Error;
      }
      const next = recorder.takeMainRedirect();
      if (failure === undefined && next === undefined) break;
      const finalUrl = mainHops.at(-1)?.url;
      const at = finalUrl !== undefined ? { finalUrl } : {};
      if (ac.signal.aborted) return { ok: false, hostDoneAt: Date.now(), ...cancelled(), ...at };
      if (next !== undefined) {
        if (visited.has(next))
          return { ok: false, hostDoneAt: Date.now(), kind: 'navigation', message: `net::ERR_TOO_MANY_REDIRECTS: redirect loop at ${next}`, ...at };
        if (visited.size > MAX_REDIRECTS)
          return { ok: false, hostDoneAt: Date.now(), kind: 'navigation', message: `net::ERR_TOO_MANY_REDIRECTS: more than ${MAX_REDIRECTS} redirects`, ...at };
        target = next;
        continue;
      }
      if (recorder.mainFailure) return { ok: false, hostDoneAt: Date.now(), kind: 'main', failure: recorder.mainFailure, ...at };
      // a document Chromium would not render (it went to the download manager) is judged as such
      const judged = mainHops.length > 0 ? afterLoad?.(mainHops.at(-1)!, mainHops.at(-1)!.url) : undefined;
      if (judged !== undefined) return { ok: false, hostDoneAt: Date.now(), ...judged };
      return { ok: false, hostDoneAt: Date.now(), kind: 'navigation', message: failure!.message.split('\n')[0]!, ...at };
    }
    const finalUrl = response?.url() ?? mainHops.at(-1)?.url ?? url;
    const main = [...mainHops].reverse().find((x) => x.url === finalUrl) ?? mainHops.at(-1);
    if (main === undefined) {
      hostDoneAt = Date.now();
      return { ok: false, hostDoneAt, kind: 'navigation', message: `${url} loaded without a recorded document response`, finalUrl };
    }
    const refusal = afterLoad?.(main, finalUrl);
    // a page judged failed records nothing more; what any other fetched while loading (XHR,
    // fetch) is in the text and links, as a reader sees it
    if (refusal !== undefined) recorder.stop();
    else await recorder.quiet(QUIET_MS, QUIET_MAX_MS, ac.signal);
    // every page that loaded lingers, the one judged failed too (the test knobs' extra time)
    if (opts.extraMs > 0) await sleep(opts.extraMs, undefined, { signal: ac.signal });
    if (refusal !== undefined) return { ok: false, hostDoneAt: Date.now(), ...refusal };
    // what the behaviors load is the host's too: they run before the host's part ends
    const budgetMs = behaviors === undefined ? 0 : behaviorBudgetMs(behaviors.seconds, opts.deadlineMs - (Date.now() - startedAt));
    let run: BehaviorRun | undefined;
    if (budgetMs > 0) {
      run = await runBehaviors(page, budgetMs, behaviors!, ac.signal);
      await recorder.quiet(QUIET_MS, QUIET_MAX_MS, ac.signal);
    }
    const rendered = await readRendered(page, opts.maxLinks);
    recorder.stop();
    hostDoneAt = Date.now();
    const liveShot = opts.liveShot === true ? await page.screenshot({ type: 'png' }) : undefined;
    const artifacts = await renderArtifacts(context, page, opts.formats);
    if (ac.signal.aborted) return { ok: false, hostDoneAt, ...cancelled(), finalUrl };
    return {
      ok: true,
      hostDoneAt,
      exchanges: recorder.exchanges,
      main,
      finalUrl,
      page: rendered,
      artifacts,
      dropped: recorder.dropped,
      refused: recorder.refused,
      failed: recorder.failed,
      behaviors: { budgetMs, ...(run ? { run } : {}) },
      ...(liveShot !== undefined ? { liveShot } : {}),
    };
  } catch (err) {
    recorder?.stop();
    const at = hostDoneAt ?? Date.now();
    const finalUrl = mainHops.at(-1)?.url;
    if (ac.signal.aborted) return { ok: false, hostDoneAt: at, ...cancelled(), ...(finalUrl ? { finalUrl } : {}) };
    return { ok: false, hostDoneAt: at, kind: 'navigation', message: (err as Error).message.split('\n')[0]!, ...(finalUrl ? { finalUrl } : {}) };
  } finally {
    clearTimeout(timer);
    await context?.close().catch(() => {});
  }
}
