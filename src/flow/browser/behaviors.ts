// Webrecorder's in-page behaviors (browsertrix-behaviors, its built bundle dist/behaviors.js):
// autoscroll to the page's end (or a site-specific behavior in its place), autoplay of media and
// autofetch of what is only named (srcset, data-src, lazy images made eager, media-query
// stylesheets). The bundle is an init script of the capture's context, so it is in every frame
// before the page's own scripts; after load the capture runs it in every frame for a budget.
// What the behaviors load is fetched by the page itself, so it goes through the capture's route
// handler like everything else (the address policy, the recorder, the WARC); none of the
// library's hooks into the crawler (__bx_fetch, __bx_addLink, __bx_open) is given to it.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Frame, Page } from 'playwright-core';
import { BEHAVIOR_GRACE_MS, MIN_BEHAVIOR_MS } from '../../domain/behavior-budget.ts';

const require = createRequire(import.meta.url);

/** e.g. "browsertrix-behaviors 0.8.4", for the capture's provenance */
export const BEHAVIORS_LIBRARY = `browsertrix-behaviors ${(require('browsertrix-behaviors/package.json') as { version: string }).version}`;

let bundle: string | undefined;

/** The library's bundle, which installs self.__bx_behaviors and runs nothing yet. */
export function behaviorsScript(): string {
  bundle ??= readFileSync(require.resolve('browsertrix-behaviors/dist/behaviors.js'), 'utf8');
  return bundle;
}

export interface BehaviorSettings {
  /** a site-specific behavior replaces autoscroll on the sites the library knows */
  siteSpecific: boolean;
}

/** What running them came to. */
export interface BehaviorRun {
  /** frames it was run in: the main frame and every iframe */
  frames: number;
  /** whether every frame's last run ended within the budget and its grace */
  finished: boolean;
  ms: number;
  /** runs: more than one when the page grew during one */
  rounds?: number;
}

interface BxManager {
  run(opts: object): Promise<void>;
  pause(): void;
}

type BxWindow = typeof globalThis & { __bx_behaviors?: BxManager };

/** Runs in the frame. autoclick stays off: it follows links, and the capture's page is one URL. */
async function runInFrame(o: { siteSpecific: boolean; timeout: number }): Promise<boolean> {
  const bx = (self as BxWindow).__bx_behaviors;
  if (bx === undefined) return false;
  await bx.run({ autofetch: true, autoplay: true, autoscroll: true, autoclick: false, siteSpecific: o.siteSpecific, timeout: o.timeout, log: false });
  return true;
}

/** Runs in the frame: what is still scrolling stops, and the page is read from its top. */
function pauseInFrame(): void {
  (self as BxWindow).__bx_behaviors?.pause();
  self.scrollTo(0, 0);
}

const inFrames = (frames: Frame[], fn: (f: Frame) => Promise<unknown>): Promise<PromiseSettledResult<unknown>[]> => Promise.allSettled(frames.map(fn));

/** One run of the behaviors in every frame, at most `budgetMs` (and the grace), then paused. */
async function runOnce(page: Page, budgetMs: number, settings: BehaviorSettings, signal: AbortSignal): Promise<{ frames: number; finished: boolean }> {
  const frames = page.frames();
  const ran = inFrames(frames, (f) => f.evaluate(runInFrame, { siteSpecific: settings.siteSpecific, timeout: budgetMs }));
  const out = await Promise.race([
    ran,
    sleep(budgetMs + BEHAVIOR_GRACE_MS, undefined, { signal }).then(
      () => undefined,
      () => undefined,
    ),
  ]);
  // a frame busy past its budget is not waited for twice: pausing gets the grace once more at most
  await Promise.race([inFrames(page.frames(), (f) => f.evaluate(pauseInFrame)), sleep(BEHAVIOR_GRACE_MS, undefined, { signal }).catch(() => undefined)]);
  return { frames: frames.length, finished: out !== undefined };
}

const pageHeight = (page: Page): Promise<number> => page.evaluate(() => document.scrollingElement?.scrollHeight ?? 0).catch(() => 0);

/** Runs in the frame: resolves after the next frame is laid out, so what a handler inserted counts in the height. */
const nextFrame = (): Promise<void> => new Promise((resolve) => requestAnimationFrame(() => setTimeout(resolve, 0)));

/**
 * Runs the behaviors in every frame of the page for `budgetMs` (the library stops waiting on its
 * own then; the flow waits BEHAVIOR_GRACE_MS more at most, or until `signal` aborts), then pauses
 * them. A page that grew during a run is run again, with a fresh copy of the library, while the
 * budget lasts. Why: autoscroll looks 500 ms after its first jump to the page's end whether the
 * page grew, and gives up for good when not; on a busy machine a feed's next page took longer than
 * that to arrive (measured: 1 of 3 feed pages), and the page grew only after autoscroll had left.
 * Whether it grew is judged only after `settle` (the capture's: its requests gone quiet) and one
 * laid-out frame: judged at once, a feed page still in flight when autoscroll left was missed
 * under load (measured again in the full suite: 1 of 3).
 */
export async function runBehaviors(
  page: Page,
  budgetMs: number,
  settings: BehaviorSettings,
  signal: AbortSignal,
  settle: () => Promise<void> = async () => {},
): Promise<BehaviorRun> {
  const started = Date.now();
  const until = started + budgetMs;
  let frames = 0;
  let rounds = 0;
  let finished = true;
  for (;;) {
    const before = await pageHeight(page);
    if (rounds > 0) await inFrames(page.frames(), (f) => f.evaluate(behaviorsScript()));
    const run = await runOnce(page, until - Date.now(), settings, signal);
    rounds++;
    frames = Math.max(frames, run.frames);
    finished = run.finished;
    if (!finished || signal.aborted || until - Date.now() < MIN_BEHAVIOR_MS || !(await grew(page, before, settle))) break;
  }
  return { frames, finished, ms: Date.now() - started, rounds };
}

async function grew(page: Page, before: number, settle: () => Promise<void>): Promise<boolean> {
  await settle();
  await page.evaluate(nextFrame).catch(() => undefined);
  return (await pageHeight(page)) > before;
}
