// The page a capture runs in: a fresh context whose every request the recorder answers, the links
// cap's layout guard and (when behaviors run) their library set on the context before the page
// is opened, pop-ups closed and dialogs dismissed. What the capture keeps of its page while it
// runs is a CaptureRun, shared by its stages so that the deadline and a throw see all of it.
import type { BrowserContext, Page, Request } from 'playwright-core';
import type { HttpExchange } from '../../domain/wacz/warc.ts';
import { behaviorsScript, type BehaviorSettings } from './behaviors.ts';
import type { CaptureBrowser } from './launch.ts';
import { breakAnywherePastCap } from './layout-guard.ts';
import { DEFAULT_RECORDER_LIMITS, Recorder } from './recorder.ts';
import { MAX_LINKS } from './render.ts';
import type { PageCaptureOptions } from './page-capture.ts';

export interface CaptureRun {
  opts: PageCaptureOptions;
  /** aborted at the deadline */
  ac: AbortController;
  startedAt: number;
  context?: BrowserContext;
  recorder?: Recorder;
  /** the main document's hops, as the recorder completed them */
  mainHops: HttpExchange[];
  /** when the host's part ended (the page was read) */
  hostDoneAt?: number;
}

export interface OpenedPage {
  context: BrowserContext;
  page: Page;
  recorder: Recorder;
}

/** The behaviors to run: none when absent or given 0 seconds. */
export function behaviorsAsked(opts: PageCaptureOptions): (BehaviorSettings & { seconds: number }) | undefined {
  return (opts.behaviors?.seconds ?? 0) > 0 ? opts.behaviors : undefined;
}

/** Which requests are the page's own and which its main-frame navigations, once the page is known. */
function requestTests(page: () => Page | undefined): { isOwn: (r: Request) => boolean; isMain: (r: Request) => boolean } {
  return {
    // a worker's or a pop-up's first request has no frame of this page: frame() throws or differs
    isOwn: (r) => {
      try {
        const p = page();
        return p !== undefined && r.frame().page() === p;
      } catch {
        return false;
      }
    },
    isMain: (r) => {
      try {
        const p = page();
        return p !== undefined && r.isNavigationRequest() && r.frame() === p.mainFrame();
      } catch {
        return false;
      }
    },
  };
}

/** Opens the page in `context`, the recorder in place first; the recorder is kept on the run. */
export async function openPage(run: CaptureRun, context: BrowserContext): Promise<OpenedPage> {
  const { opts } = run;
  // the page is opened after the route and the init script are in place: set on the context,
  // they travel with the page's own start-up instead of costing two more round trips each time.
  // The route may ask about a request before newPage resolves: until then no request is the page's.
  const opened: { page?: Page } = {};
  const { isOwn, isMain } = requestTests(() => opened.page);
  const recorder = new Recorder({
    fetcher: opts.fetcher,
    limits: opts.limits ?? DEFAULT_RECORDER_LIMITS,
    signal: run.ac.signal,
    isOwn,
    isMainDocument: isMain,
    onRecord: (x, r) => {
      if (isMain(r)) run.mainHops.push(x);
    },
  });
  run.recorder = recorder;
  // a page past the links cap gets a break opportunity everywhere (layout-guard.ts)
  await Promise.all([
    context.route('**/*', recorder.handle),
    context.addInitScript(breakAnywherePastCap, opts.maxLinks ?? MAX_LINKS),
    behaviorsAsked(opts) !== undefined ? context.addInitScript({ content: behaviorsScript() }) : undefined,
  ]);
  const page = await context.newPage();
  opened.page = page;
  context.on('page', (p) => {
    if (p !== page) void p.close().catch(() => {});
  });
  page.on('dialog', (d) => void d.dismiss().catch(() => {}));
  return { context, page, recorder };
}

/** Opens the capture's own context (the deadline closes it) and its page in it; undefined when the deadline passed meanwhile. */
export async function openSession(browser: CaptureBrowser, run: CaptureRun): Promise<OpenedPage | undefined> {
  const context = await browser.newContext({ userAgent: run.opts.userAgent });
  run.context = context;
  if (run.ac.signal.aborted) return undefined;
  return openPage(run, context);
}
