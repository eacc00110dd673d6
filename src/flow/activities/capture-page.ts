// capturePage, run by capture workers on the capture task queue: robots.txt first (Disallow →
// skipped; a Crawl-delay longer than the slice's delay is waited out before the visit), then the
// visit in Chromium, then packaging and upload. The slice hears hostDone the moment the host's
// part ends, so the host's spacing never waits for an upload. Heartbeats go out all along: a
// worker that dies mid-page is found out within the heartbeat timeout and the page goes to
// another worker; the dead one's half-written artifacts are overwritten by the next attempt
// (same taskId, same keys) and only a manifest written last is ever reported.
import { setTimeout as sleep } from 'node:timers/promises';
import { Context } from '@temporalio/activity';
import type { WaczSigner } from '../../domain/wacz/write.ts';
import type { CaptureBrowser } from '../browser/launch.ts';
import { packageCapture, writeCapture, type Visit } from '../capture.ts';
import { checkedVisit } from './checked-visit.ts';
import type { Fetcher } from '../fetcher.ts';
import { DEFAULT_DEADLINE_MS, extraDelayMs, matches } from '../knobs.ts';
import type { HostLog } from '../level.ts';
import { pageTaskId } from '../resume.ts';
import type { RobotsCache } from '../robots-cache.ts';
import type { ArtifactStore } from '../store.ts';
import { BEHAVIORS_LIBRARY } from '../browser/behaviors.ts';
import { hostDoneSignal } from '../workflows/messages.ts';
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
}

async function waitUntil(at: number): Promise<void> {
  for (let wait = at - Date.now(); wait > 0; wait = at - Date.now()) await sleep(Math.min(wait, 1000));
}

class WorkerStopped extends Error {
  override name = 'WorkerStopped';
}

export function createCaptureActivities(deps: CaptureDeps): CaptureActivities {
  return {
    async capturePage(input) {
      const ctx = Context.current();
      const beat = setInterval(() => ctx.heartbeat(), CAPTURE_HEARTBEAT_INTERVAL_MS);
      try {
        return await capture(deps, input, ctx);
      } finally {
        clearInterval(beat);
      }
    },
  };
}

async function capture(deps: CaptureDeps, input: CapturePageInput, ctx: Context): Promise<CapturePageResult> {
  const { url, knobs } = input;
  // handed over ahead of the host's ready time: not even robots.txt is asked for before it
  await waitUntil(input.startAt ?? 0);
  const rules = await deps.robots.get(url);
  const delay = rules.crawlDelayMs !== undefined ? { crawlDelayMs: rules.crawlDelayMs } : {};
  if (!rules.isAllowed(url)) {
    deps.log(`skip ${url}: robots.txt${rules.disallowAll ? ` (${rules.disallowAll})` : ''}`);
    return { kind: 'skipped', ...delay };
  }
  const readyAt = input.lastFinishedAt === undefined ? 0 : input.lastFinishedAt + Math.max(input.delayMs, rules.crawlDelayMs ?? 0);
  if (readyAt > input.startBy) return { kind: 'too-late', ...delay, readyAt };
  await waitUntil(readyAt);
  if (deps.stopped?.()) throw new WorkerStopped('the capture worker is stopping');

  // derived, not random: another attempt (another worker) writes the same keys
  const taskId = pageTaskId(input.crawlId, input.depth, url);
  const submittedAt = Date.now();
  const visitOptions = {
    userAgent: deps.userAgent,
    fetcher: deps.fetcher,
    formats: input.formats,
    extraMs: extraDelayMs(knobs, url),
    deadlineMs: Math.max(1000, Math.floor(Math.min(knobs.deadlineMs ?? DEFAULT_DEADLINE_MS, input.finishBy - Date.now()))),
    injectFailure: matches(knobs.fail, url),
    ...(input.behaviors !== undefined ? { behaviors: input.behaviors } : {}),
  };
  const hostDelayMs = Math.max(input.delayMs, rules.crawlDelayMs ?? 0);
  const {
    visit,
    hostDoneAt: finishedAt,
    qa,
  } = await checkedVisit(deps.browser, url, visitOptions, input.qa === true, { delayMs: hostDelayMs, finishBy: input.finishBy });
  if (deps.stopped?.()) throw new WorkerStopped('the capture worker is stopping');
  const host = new URL(url).host;
  deps.hostLog?.record(host, { crawlId: input.crawlId, depth: input.depth, url, taskId, submittedAt, finishedAt });
  const slice = ctx.client.workflow.getHandle(ctx.info.workflowExecution!.workflowId);
  await slice
    .signal(hostDoneSignal, { index: input.index, attempt: input.attempt, submittedAt, finishedAt })
    .catch((err: unknown) => deps.log(`hostDone for ${url}: ${(err as Error).message}`));

  const visited = { kind: 'visited' as const, ...delay, submittedAt, finishedAt };
  const provenance = {
    browser: await deps.browser.version().catch(() => 'Chromium (version unknown)'),
    worker: deps.software,
    settings: {
      crawlId: input.crawlId,
      depth: input.depth,
      formats: input.formats,
      signing: input.signing,
      perHostDelayMs: input.delayMs,
      follow: input.follow,
      attempt: input.attempt,
      behaviors: behaviorProvenance(input, visit),
    },
    robots: rules.crawlDelayMs !== undefined ? `allowed (Crawl-delay ${rules.crawlDelayMs} ms)` : 'allowed',
  };
  const packaged = await packageCapture(
    visit,
    {
      taskId,
      url,
      follow: input.follow,
      formats: input.formats,
      prefix: input.prefix,
      software: deps.software,
      startedAt: new Date(submittedAt),
      finishedAt: new Date(finishedAt),
      userAgent: deps.userAgent,
      provenance,
      ...(qa !== undefined ? { qa } : {}),
      ...(input.known !== undefined ? { known: input.known } : {}),
      ...(deps.signer && input.signing ? { signer: deps.signer } : {}),
    },
    deps.store.bucket,
  );
  const finalUrl = packaged.finalUrl !== undefined ? { finalUrl: packaged.finalUrl } : {};
  const lostManifest = matches(knobs.manifestError, url);
  if (deps.stopped?.()) throw new WorkerStopped('the capture worker is stopping');
  try {
    await writeCapture(packaged, deps.store, { skipManifest: lostManifest });
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
  return { ...visited, ...finalUrl, status, manifest: true, ...dedup };
}

/** The behaviors as the warcinfo states them: what the crawl asked for and what the page got. */
function behaviorProvenance(input: CapturePageInput, visit: Visit): Record<string, unknown> {
  const asked = input.behaviors ?? { seconds: 0, siteSpecific: false };
  const got = visit.kind === 'rendered' ? visit.behaviors : undefined;
  return {
    library: BEHAVIORS_LIBRARY,
    seconds: asked.seconds,
    siteSpecific: asked.siteSpecific,
    ...(asked.seconds > 0 ? { enabled: ['autoscroll', 'autoplay', 'autofetch', ...(asked.siteSpecific ? ['siteSpecific'] : [])] } : {}),
    ...(got !== undefined
      ? { budgetMs: got.budgetMs, ...(got.run ? { ranMs: got.run.ms, finished: got.run.finished, frames: got.run.frames, rounds: got.run.rounds } : {}) }
      : {}),
  };
}
