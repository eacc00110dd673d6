// A visit with its quality check (the dispatch's qa): the capture is replayed from its own records
// and scored (browser/replay-check.ts, domain/qa.ts); one that needs review is captured once
// more, lingering longer (and with longer behaviors), after the host's delay has passed since the first attempt ended, and
// only when the level's window still has room for it. The second attempt is kept when it rendered;
// both scores go into the manifest. The host's part ends when the last attempt's does.
import { setTimeout as sleep } from 'node:timers/promises';
import { CRAWL_LIMITS } from '../../domain/crawl.ts';
import { qaVerdict, QA_RETRY_LINGER_MS, shouldRecapture, type QaAttempt } from '../../domain/qa.ts';
import type { CaptureBrowser } from '../browser/launch.ts';
import { replayCheck } from '../browser/replay-check.ts';
import { visitPage, type Visit, type VisitOptions } from '../capture.ts';

/** The replay check of one attempt gives up after this long. */
const REPLAY_CHECK_MS = 20_000;

export interface CheckedVisit {
  visit: Visit;
  /** when the host's part of the last attempt ended (ms) */
  hostDoneAt: number;
  qa?: QaAttempt[];
}

export interface CheckWindow {
  /** the host's delay (the slice's, or a longer Crawl-delay) */
  delayMs: number;
  /** the level's end (ms): a second attempt must be able to finish by then */
  finishBy: number;
}

async function score(browser: CaptureBrowser, visit: Visit & { kind: 'rendered' }, userAgent: string, attempt: 1 | 2): Promise<QaAttempt> {
  const s = await replayCheck(browser, {
    exchanges: visit.exchanges,
    finalUrl: visit.finalUrl,
    userAgent,
    liveShot: visit.liveShot!,
    liveText: visit.page.text,
    deadlineMs: REPLAY_CHECK_MS,
  });
  return { attempt, verdict: qaVerdict(s), ...s };
}

export async function checkedVisit(browser: CaptureBrowser, url: string, opts: VisitOptions, qa: boolean, window: CheckWindow): Promise<CheckedVisit> {
  // with the check on, the first attempt's end is not yet the host's: a second may follow (the caller is told when this returns)
  const { onHostDone: _last, ...firstOpts } = opts;
  const first = await visitPage(browser, url, qa ? { ...firstOpts, liveShot: true } : opts);
  if (!qa || first.kind !== 'rendered') return { visit: first, hostDoneAt: first.hostDoneAt };
  const attempts = [await score(browser, first, opts.userAgent, 1)];
  const readyAt = first.hostDoneAt + window.delayMs;
  const linger = Math.max(opts.extraMs * 2, QA_RETRY_LINGER_MS);
  if (!shouldRecapture(attempts) || readyAt + linger + opts.deadlineMs > window.finishBy) return { visit: first, hostDoneAt: first.hostDoneAt, qa: attempts };
  for (let wait = readyAt - Date.now(); wait > 0; wait = readyAt - Date.now()) await sleep(Math.min(wait, 1000));
  // lingering longer, and with twice the behaviors' time when the crawl runs them (their budget
  // stays bounded by the deadline: behavior-budget.ts)
  const behaviors =
    opts.behaviors !== undefined && opts.behaviors.seconds > 0
      ? { behaviors: { ...opts.behaviors, seconds: Math.min(opts.behaviors.seconds * 2, CRAWL_LIMITS.behaviorsSeconds) } }
      : {};
  const second = await visitPage(browser, url, { ...opts, extraMs: linger, liveShot: true, ...behaviors });
  if (second.kind !== 'rendered') return { visit: first, hostDoneAt: second.hostDoneAt, qa: attempts };
  attempts.push(await score(browser, second, opts.userAgent, 2));
  return { visit: second, hostDoneAt: second.hostDoneAt, qa: attempts };
}
