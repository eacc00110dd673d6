// One capture in the browser: a fresh context, every request answered by the recorder, the page
// loaded, its requests left to go quiet and the page to linger, the in-page behaviors run for their
// budget (behaviors.ts) and what they asked for left to go quiet, then read (title, text, links)
// and rendered (html, screenshots, mhtml). The host's part ends when the page has been read:
// `hostDoneAt`, from which its pacing delay counts; rendering makes no requests (the recorder
// aborts any). The deadline covers it all: when it fires the context is closed and the capture
// is cancelled.
import { setTimeout as sleep } from 'node:timers/promises';
import type { Page } from 'playwright-core';
import type { CaptureFormat } from '../../domain/contract.ts';
import type { HttpExchange } from '../../domain/wacz/warc.ts';
import type { Fetcher } from '../fetcher.ts';
import type { CaptureBrowser } from './launch.ts';
import type { MainFailure, Recorder, RecorderLimits } from './recorder.ts';
import { behaviorBudgetMs } from '../../domain/behavior-budget.ts';
import { runBehaviors, type BehaviorRun, type BehaviorSettings } from './behaviors.ts';
import { readRendered, renderArtifacts, type RenderedArtifacts, type RenderedPage } from './render.ts';
import { cancelledFailure, firstLine, lastHopAt, navigate } from './navigate.ts';
import { behaviorsAsked, openSession, type CaptureRun, type OpenedPage } from './page-session.ts';

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
  /** told the moment the page has been read (the host's part is over), before rendering and teardown */
  onHostDone?: (hostDoneAt: number) => void;
  /** the capture given up (Temporal cancelled it): the visit is torn down as at its deadline */
  signal?: AbortSignal;
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
  const run: CaptureRun = { opts, ac: new AbortController(), startedAt: Date.now(), mainHops: [] };
  const tearDown = (): void => {
    run.ac.abort(new Error('deadline'));
    void run.context?.close().catch(() => {});
  };
  const timer = setTimeout(tearDown, opts.deadlineMs);
  opts.signal?.addEventListener('abort', tearDown, { once: true });
  if (opts.signal?.aborted) tearDown();
  try {
    return await captureStages(browser, url, run, afterLoad);
  } catch (err) {
    return thrown(run, err);
  } finally {
    clearTimeout(timer);
    opts.signal?.removeEventListener('abort', tearDown);
    await run.context?.close().catch(() => {});
  }
}

function failed(failure: PageCaptureFailure, hostDoneAt = Date.now()): PageCaptureResult {
  return { ok: false, hostDoneAt, ...failure };
}

/** open → navigate → judge and settle → behaviors → read and render. */
async function captureStages(browser: CaptureBrowser, url: string, run: CaptureRun, afterLoad: AfterLoad | undefined): Promise<PageCaptureResult> {
  const opened = await openSession(browser, run);
  if (opened === undefined) return failed(cancelledFailure(run.opts.deadlineMs));
  const { page, recorder } = opened;
  const navigation = await navigate(page, recorder, url, run, afterLoad);
  if (navigation.kind !== 'loaded') return failed(navigation);
  const finalUrl = navigation.response?.url() ?? run.mainHops.at(-1)?.url ?? url;
  const main = [...run.mainHops].reverse().find((x) => x.url === finalUrl) ?? run.mainHops.at(-1);
  if (main === undefined) return failed({ kind: 'navigation', message: `${url} loaded without a recorded document response`, finalUrl });
  const refusal = await settle(page, recorder, run, afterLoad?.(main, finalUrl));
  if (refusal !== undefined) return failed(refusal);
  const behaviors = await budgetedBehaviors(page, recorder, run);
  return readAndRender(opened, run, { main, finalUrl, behaviors });
}

/**
 * Lets the loaded page go quiet and linger. A page judged failed records nothing more; what any
 * other fetched while loading (XHR, fetch) is in the text and links, as a reader sees it. Every
 * page that loaded lingers, the one judged failed too (the test knobs' extra time).
 */
async function settle(page: Page, recorder: Recorder, run: CaptureRun, refusal: PageCaptureFailure | undefined): Promise<PageCaptureFailure | undefined> {
  const { signal } = run.ac;
  if (refusal !== undefined) recorder.stop();
  else await recorder.quiet(QUIET_MS, QUIET_MAX_MS, signal);
  if (run.opts.extraMs > 0) await sleep(run.opts.extraMs, undefined, { signal });
  return refusal;
}

/** What the behaviors load is the host's too: they run (and go quiet) before the host's part ends. */
async function budgetedBehaviors(page: Page, recorder: Recorder, run: CaptureRun): Promise<PageCapture['behaviors']> {
  const behaviors = behaviorsAsked(run.opts);
  const budgetMs = behaviors === undefined ? 0 : behaviorBudgetMs(behaviors.seconds, run.opts.deadlineMs - (Date.now() - run.startedAt));
  let ran: BehaviorRun | undefined;
  if (budgetMs > 0) {
    const settle = (): Promise<void> => recorder.quiet(QUIET_MS, QUIET_MAX_MS, run.ac.signal);
    ran = await runBehaviors(page, budgetMs, behaviors!, run.ac.signal, settle);
    await settle();
  }
  return { budgetMs, ...(ran ? { run: ran } : {}) };
}

/** Reads the page (the host's part ends there), then renders what the formats ask for. */
async function readAndRender(
  { context, page, recorder }: OpenedPage,
  run: CaptureRun,
  got: { main: HttpExchange; finalUrl: string; behaviors: PageCapture['behaviors'] },
): Promise<PageCaptureResult> {
  const { opts } = run;
  const rendered = await readRendered(page, opts.maxLinks);
  recorder.stop();
  const hostDoneAt = Date.now();
  run.hostDoneAt = hostDoneAt;
  opts.onHostDone?.(hostDoneAt);
  const liveShot = opts.liveShot === true ? await page.screenshot({ type: 'png' }) : undefined;
  const artifacts = await renderArtifacts(context, page, opts.formats);
  if (run.ac.signal.aborted) return failed({ ...cancelledFailure(opts.deadlineMs), finalUrl: got.finalUrl }, hostDoneAt);
  return {
    ok: true,
    hostDoneAt,
    exchanges: recorder.exchanges,
    main: got.main,
    finalUrl: got.finalUrl,
    page: rendered,
    artifacts,
    dropped: recorder.dropped,
    refused: recorder.refused,
    failed: recorder.failed,
    behaviors: got.behaviors,
    ...(liveShot !== undefined ? { liveShot } : {}),
  };
}

/** Whatever threw: the deadline's teardown, or a navigation that broke. */
function thrown(run: CaptureRun, err: unknown): PageCaptureResult {
  run.recorder?.stop();
  const at = run.hostDoneAt ?? Date.now();
  const where = lastHopAt(run.mainHops);
  if (run.ac.signal.aborted) return failed({ ...cancelledFailure(run.opts.deadlineMs), ...where }, at);
  return failed({ kind: 'navigation', message: firstLine((err as Error).message), ...where }, at);
}
