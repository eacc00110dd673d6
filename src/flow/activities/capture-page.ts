// capturePage, run by capture workers on the capture task queue: robots.txt first (Disallow →
// skipped; a Crawl-delay longer than the slice's delay is waited out before the visit), then the
// visit in Chromium, then packaging and upload. The slice hears hostDone the moment the host's
// part ends, so the host's spacing never waits for an upload. Heartbeats go out all along: a
// worker that dies mid-page is found out within the heartbeat timeout and the page goes to
// another worker; the dead one's half-written artifacts are overwritten by the next attempt
// (same taskId, same keys) and only a manifest written last is ever reported. A worker alive but
// given up by Temporal (its heartbeats not heard within the timeout, the slice cancelled) hears so
// on its next heartbeat: the capture stops where it is, its visit torn down, nothing uploaded, so
// the attempt that took the page over is the only one that visits the host and writes its keys.
import { setTimeout as sleep } from 'node:timers/promises';
import { CancelledFailure, Context } from '@temporalio/activity';
import { hostDelayMs, hostReadyAt, visitDeadlineMs } from '../../domain/capture-window.ts';
import type { RobotsRules } from '../../domain/robots.ts';
import type { WaczSigner } from '../../domain/wacz/write.ts';
import type { CaptureBrowser } from '../browser/launch.ts';
import { packageCapture, writeCapture, type Packaged, type VisitOptions } from '../capture.ts';
import { checkedVisit, type CheckedVisit } from './checked-visit.ts';
import { captureProvenance } from './capture-provenance.ts';
import type { Fetcher } from '../fetcher.ts';
import { DEFAULT_DEADLINE_MS, extraDelayMs, matches } from '../knobs.ts';
import type { HostLog } from '../level.ts';
import { pageTaskId } from '../resume.ts';
import type { RobotsCache } from '../robots-cache.ts';
import type { ArtifactStore } from '../store.ts';
import type { CaptureKey, CaptureLanes } from '../capture-worker/lanes.ts';
import { captureStartedSignal, hostDoneSignal } from '../workflows/messages.ts';
import type { CaptureActivities, CapturePageInput, CapturePageResult } from './types.ts';

/** How often a capture tells Temporal it is alive (the slice gives up after 15 s of silence). */
export const CAPTURE_HEARTBEAT_INTERVAL_MS = 2_000;

export interface CaptureDeps {
  browser: CaptureBrowser;
  fetcher: Fetcher;
  robots: RobotsCache;
  store: ArtifactStore;
  userAgent: string;
  /** names the worker in every manifest it writes */
  software: string;
  signer?: WaczSigner;
  /** what this worker did to each host (tests, GET /hosts) */
  hostLog?: HostLog;
  log: (line: string) => void;
  /** true once the worker is killed (tests): nothing more is visited or written */
  stopped?: () => boolean;
  /** the worker's own task queue, where a slice hands over captures behind the worker's, and
   * what holds them until the one ahead is done (absent: none are handed over) */
  lanes?: { queue: string; gates: CaptureLanes };
}

/** Waits until `at`; throws when the capture is given up, before the wait or during it. */
async function waitUntil(at: number, ctx: Context): Promise<void> {
  throwIfGivenUp(ctx);
  for (let wait = at - Date.now(); wait > 0; wait = at - Date.now()) {
    await sleep(Math.min(wait, 1000), undefined, { signal: ctx.cancellationSignal }).catch(() => undefined);
    throwIfGivenUp(ctx);
  }
}

class WorkerStopped extends Error {
  override name = 'WorkerStopped';
}

/** Temporal gave the capture up: its reason (a CancelledFailure), thrown so the attempt ends as cancelled. */
function throwIfGivenUp(ctx: Context): void {
  if (!ctx.cancellationSignal.aborted) return;
  const reason: unknown = ctx.cancellationSignal.reason;
  throw reason instanceof CancelledFailure ? reason : new CancelledFailure(`the capture was given up: ${String(reason)}`);
}

function throwIfStopped(deps: CaptureDeps, ctx: Context): void {
  if (deps.stopped?.()) throw new WorkerStopped('the capture worker is stopping');
  throwIfGivenUp(ctx);
}

export function createCaptureActivities(deps: CaptureDeps): CaptureActivities {
  return {
    async capturePage(input) {
      const ctx = Context.current();
      const beat = setInterval(() => ctx.heartbeat(), CAPTURE_HEARTBEAT_INTERVAL_MS);
      const key = captureKey(ctx, input);
      deps.lanes?.gates.begin(key, input.after === undefined);
      try {
        return await capture(deps, input, ctx, key);
      } finally {
        deps.lanes?.gates.end(key);
        clearInterval(beat);
      }
    },
  };
}

/** A visit that happened: when the host's part of it began and ended (ms). */
type VisitedTimes = { kind: 'visited'; crawlDelayMs?: number; submittedAt: number; finishedAt: number };

/** robots.txt → the host's ready time → the visit (with its quality check) → packaging → upload. */
async function capture(deps: CaptureDeps, input: CapturePageInput, ctx: Context, key: CaptureKey): Promise<CapturePageResult> {
  const { url } = input;
  const lanes = deps.lanes;
  if (input.after !== undefined) await lanes?.gates.after({ workflowId: key.workflowId, ...input.after });
  // handed over ahead of the host's ready time: not even robots.txt is asked for before it
  await waitUntil(input.startAt ?? 0, ctx);
  if (lanes !== undefined) started(deps, input, ctx, lanes.queue);
  const rules = await deps.robots.get(url);
  const delay = rules.crawlDelayMs !== undefined ? { crawlDelayMs: rules.crawlDelayMs } : {};
  if (!rules.isAllowed(url)) {
    deps.log(`skip ${url}: robots.txt${rules.disallowAll ? ` (${rules.disallowAll})` : ''}`);
    return { kind: 'skipped', ...delay };
  }
  const hostDelay = hostDelayMs(input.delayMs, rules.crawlDelayMs);
  const readyAt = hostReadyAt(input.lastFinishedAt, hostDelay);
  if (readyAt > input.startBy) return { kind: 'too-late', ...delay, readyAt };
  await waitUntil(readyAt, ctx);
  throwIfStopped(deps, ctx);

  // derived, not random: another attempt (another worker) writes the same keys
  const taskId = pageTaskId(input.crawlId, input.depth, url);
  const { checked, visited } = await heldVisit(deps, input, ctx, key, { taskId, hostDelay, delay });
  const packaged = await packageVisit(deps, input, rules, checked, { taskId, ...visited });
  return await storeCapture(deps, input, ctx, packaged, visited);
}

/**
 * The visit, holding one of the worker's slots while the host's part lasts. The moment the page
 * has been read, not after its rendering and teardown (measured: ~15 ms of every hand-over at one
 * slot was the context closing), the slot is freed, what waits behind this capture on this worker
 * may start, and the slice hears hostDone; a visit that ends another way frees them as it ends.
 */
async function heldVisit(
  deps: CaptureDeps,
  input: CapturePageInput,
  ctx: Context,
  key: CaptureKey,
  at: { taskId: string; hostDelay: number; delay: { crawlDelayMs?: number } },
): Promise<{ checked: CheckedVisit; visited: VisitedTimes }> {
  const gates = deps.lanes?.gates;
  await gates?.acquire();
  const submittedAt = Date.now();
  let freed = false;
  const free = (): void => {
    if (freed) return;
    freed = true;
    gates?.release();
    gates?.end(key);
  };
  const visitedAt = (finishedAt: number): VisitedTimes => ({ kind: 'visited', ...at.delay, submittedAt, finishedAt });
  let told: Promise<void> | undefined;
  const tell = (finishedAt: number): Promise<void> => (told ??= hostDone(deps, input, ctx, at.taskId, visitedAt(finishedAt)));
  const onHostDone = (finishedAt: number): void => {
    free();
    // a worker being stopped tells nobody, as if it had died there (tests)
    if (!deps.stopped?.()) void tell(finishedAt);
  };
  let checked: CheckedVisit;
  try {
    checked = await checkedVisit(deps.browser, input.url, { ...visitOptions(deps, input), onHostDone, signal: ctx.cancellationSignal }, input.qa === true, {
      delayMs: at.hostDelay,
      finishBy: input.finishBy,
    });
  } finally {
    free();
  }
  throwIfStopped(deps, ctx);
  await tell(checked.hostDoneAt);
  return { checked, visited: visitedAt(checked.hostDoneAt) };
}

function visitOptions(deps: CaptureDeps, input: CapturePageInput): VisitOptions {
  const { url, knobs } = input;
  return {
    userAgent: deps.userAgent,
    fetcher: deps.fetcher,
    formats: input.formats,
    extraMs: extraDelayMs(knobs, url),
    deadlineMs: visitDeadlineMs(knobs.deadlineMs ?? DEFAULT_DEADLINE_MS, input.finishBy, Date.now()),
    injectFailure: matches(knobs.fail, url),
    ...(input.behaviors !== undefined ? { behaviors: input.behaviors } : {}),
  };
}

function captureKey(ctx: Context, input: CapturePageInput): CaptureKey {
  return { workflowId: ctx.info.workflowExecution!.workflowId, index: input.index, attempt: input.attempt };
}

/** The slice may hand over the capture to follow this one to this worker's own queue. Not waited
 * for: a slice that hears it late only hands the next capture over later. */
function started(deps: CaptureDeps, input: CapturePageInput, ctx: Context, workerQueue: string): void {
  const slice = ctx.client.workflow.getHandle(ctx.info.workflowExecution!.workflowId);
  slice
    .signal(captureStartedSignal, { index: input.index, attempt: input.attempt, workerQueue })
    .catch((err: unknown) => deps.log(`captureStarted for ${input.url}: ${(err as Error).message}`));
}

/** The host's part is over: logged, and the slice told at once, so its spacing never waits for an upload. */
async function hostDone(deps: CaptureDeps, input: CapturePageInput, ctx: Context, taskId: string, visited: VisitedTimes): Promise<void> {
  const { url } = input;
  const { submittedAt, finishedAt } = visited;
  deps.hostLog?.record(new URL(url).host, {
    crawlId: input.crawlId,
    depth: input.depth,
    url,
    taskId,
    submittedAt,
    finishedAt,
    ...(input.after !== undefined ? { behind: true as const } : {}),
  });
  const slice = ctx.client.workflow.getHandle(ctx.info.workflowExecution!.workflowId);
  await slice
    .signal(hostDoneSignal, { index: input.index, attempt: input.attempt, submittedAt, finishedAt })
    .catch((err: unknown) => deps.log(`hostDone for ${url}: ${(err as Error).message}`));
}

async function packageVisit(
  deps: CaptureDeps,
  input: CapturePageInput,
  rules: RobotsRules,
  { visit, qa }: CheckedVisit,
  at: { taskId: string; submittedAt: number; finishedAt: number },
): Promise<Packaged> {
  const provenance = await captureProvenance(deps.browser, deps.software, input, rules, visit);
  return packageCapture(
    visit,
    {
      taskId: at.taskId,
      url: input.url,
      follow: input.follow,
      formats: input.formats,
      prefix: input.prefix,
      software: deps.software,
      startedAt: new Date(at.submittedAt),
      finishedAt: new Date(at.finishedAt),
      userAgent: deps.userAgent,
      provenance,
      ...(qa !== undefined ? { qa } : {}),
      ...(input.known !== undefined ? { known: input.known } : {}),
      ...(deps.signer && input.signing ? { signer: deps.signer } : {}),
    },
    deps.store.bucket,
  );
}

/** Uploads the capture (its manifest last) and says how it went. */
async function storeCapture(deps: CaptureDeps, input: CapturePageInput, ctx: Context, packaged: Packaged, visited: VisitedTimes): Promise<CapturePageResult> {
  const { url, knobs } = input;
  const finalUrl = packaged.finalUrl !== undefined ? { finalUrl: packaged.finalUrl } : {};
  const lostManifest = matches(knobs.manifestError, url);
  throwIfStopped(deps, ctx);
  let written: { manifestVersion?: string };
  try {
    written = await writeCapture(packaged, deps.store, { skipManifest: lostManifest });
  } catch (err) {
    deps.log(`capture ${url}: ${(err as Error).message}`);
    return { ...visited, ...finalUrl, status: 'failed', manifest: false, manifestError: (err as Error).message };
  }
  if (lostManifest)
    return {
      ...visited,
      ...finalUrl,
      status: 'failed',
      manifest: false,
      manifestError: 'the capturer did not say where it wrote the manifest (test knob "manifestError")',
    };
  const status = packaged.manifest.status === 'succeeded' && !matches(knobs.reportFailed, url) ? 'captured' : 'failed';
  deps.log(
    `${status} ${url}${packaged.manifest.error ? ` (${packaged.manifest.error.type}: ${packaged.manifest.error.message})` : ''} → ${packaged.manifestKey}`,
  );
  // only a capture the ledger will admit offers its payloads to later pages
  const dedup = status === 'captured' && packaged.dedup !== undefined ? { stored: packaged.dedup.stored, revisited: packaged.dedup.revisited } : {};
  return { ...visited, ...finalUrl, status, manifest: true, ...written, ...dedup };
}
