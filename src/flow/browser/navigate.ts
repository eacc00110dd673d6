// The main document's navigation: the recorder answers each redirect hop with a redirect of its
// own, and the page is sent on to the next hop here, one navigation per hop, refusing loops and
// too many hops as Chromium would. A navigation that fails is told apart: the deadline, the
// recorder's own failure of the document, a document Chromium would not render, or the network.
import type { Page, Response } from 'playwright-core';
import { mainRedirectRefusal, visitedKey } from '../../domain/main-redirects.ts';
import type { HttpExchange } from '../../domain/wacz/warc.ts';
import { MAX_REDIRECTS, type Recorder } from './recorder.ts';
import type { CaptureRun } from './page-session.ts';
import type { AfterLoad, PageCaptureFailure } from './page-capture.ts';

export type Navigation = { kind: 'loaded'; response: Response | null } | PageCaptureFailure;

export function cancelledFailure(deadlineMs: number): PageCaptureFailure {
  return { kind: 'cancelled', message: `capture exceeded its deadline of ${deadlineMs} ms and was torn down` };
}

export function firstLine(message: string): string {
  return message.split('\n')[0]!;
}

/** Where the main document got to, as a failure's finalUrl: its last hop recorded. */
export function lastHopAt(mainHops: readonly HttpExchange[]): { finalUrl?: string } {
  const finalUrl = mainHops.at(-1)?.url;
  return finalUrl !== undefined ? { finalUrl } : {};
}

export async function navigate(page: Page, recorder: Recorder, url: string, run: CaptureRun, afterLoad: AfterLoad | undefined): Promise<Navigation> {
  const visited = new Set<string>();
  for (let target = url; ;) {
    visited.add(visitedKey(target));
    let response: Response | null = null;
    let failure: Error | undefined;
    try {
      response = await page.goto(target, { waitUntil: 'load', timeout: 0 });
    } catch (err) {
      failure = err as Error;
    }
    const next = recorder.takeMainRedirect();
    if (failure === undefined && next === undefined) return { kind: 'loaded', response };
    const at = lastHopAt(run.mainHops);
    if (run.ac.signal.aborted) return { ...cancelledFailure(run.opts.deadlineMs), ...at };
    if (next === undefined) return loadFailure(recorder, run.mainHops, failure!, afterLoad, at);
    const refusal = mainRedirectRefusal(visited, next, MAX_REDIRECTS);
    if (refusal !== undefined) return { kind: 'navigation', message: refusal, ...at };
    target = next;
  }
}

/** A navigation that threw with no redirect to follow. */
function loadFailure(
  recorder: Recorder,
  mainHops: readonly HttpExchange[],
  failure: Error,
  afterLoad: AfterLoad | undefined,
  at: { finalUrl?: string },
): PageCaptureFailure {
  if (recorder.mainFailure) return { kind: 'main', failure: recorder.mainFailure, ...at };
  // a document Chromium would not render (it went to the download manager) is judged as such
  const last = mainHops.at(-1);
  const judged = last !== undefined ? afterLoad?.(last, last.url) : undefined;
  if (judged !== undefined) return judged;
  return { kind: 'navigation', message: firstLine(failure.message), ...at };
}
