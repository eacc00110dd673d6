// A slice of a level (src/domain/level-slices.ts): its hosts paced with durable timers, each page
// a capturePage activity on the capture task queue. What a host feels is what src/domain/pacing.ts
// decides: the next capture on a host starts no earlier than the previous one's finish (told by
// the capture worker the moment the host's part is over, signal hostDone) plus the host's delay,
// and no more hosts at once than the slice's slots. A capture whose worker died (no heartbeat) is
// tried again, paced from the moment it was given up, on whichever worker takes it.
import { ActivityFailure, TimeoutFailure, condition, patched, proxyActivities, setHandler } from '@temporalio/workflow';
import { Pacer, type Started } from '../../domain/pacing.ts';
import { DEDUP_LIMITS, PayloadIndex } from '../../domain/wacz/payload-index.ts';
import type { CaptureActivities, CapturePageResult } from '../activities/types.ts';
import {
  captureStartedSignal,
  hostDoneSignal,
  sliceProgressQuery,
  type CaptureStarted,
  type HostDone,
  type PageOutcome,
  type SliceInput,
  type SliceResult,
} from './messages.ts';

/** A page is given to at most this many workers before it is reported failed. */
const MAX_CAPTURE_ATTEMPTS = 3;
/** A worker that has not heartbeated for this long is taken for dead and its page tried again. */
const CAPTURE_HEARTBEAT_TIMEOUT_MS = 15_000;
/** Packaging and upload after the visit: the activity's own time beyond the visit's deadline. */
const PACKAGING_MS = 60_000;
/** A capture goes to the capture queue up to this long before its host may start (the timer, the
 * workflow task and a worker's poll take part of it, more on a loaded machine) and the worker
 * waits out the rest, so a host's spacing is the delay and not the delay plus the hand-over. The
 * lead is never longer than the per-host delay: a host that finishes after a slot was given
 * ahead is then never ready before the host it was given to, so the slot was not held from it. */
export const MAX_CAPTURE_LEAD_MS = 1000;
/** Slices that started before the lead replay without it (they scheduled on timers). */
const CAPTURE_LEAD_PATCH = 'capture-lead';
/** Slices that started before the least-bound choice of hosts replay with the earliest-start one
 * (src/domain/host-choice.ts): the choice decides which capturePage is scheduled next. */
const LEAST_BOUND_PATCH = 'pacing-least-bound';
/** Slices that started before the slot lead replay without it (a slot's next capture was handed
 * over only once its host's part was over). */
const SLOT_LEAD_PATCH = 'slot-lead';
/** A capture handed over behind another goes to that worker's own queue; one not taken from it
 * within this long (the worker died) goes back in line, no attempt counted. */
export const BEHIND_START_TIMEOUT_MS = 10_000;

/** The capture a page was handed over behind, and the queue of the worker that holds it. */
interface Ahead {
  index: number;
  attempt: number;
  queue: string;
}

const hostOf = (url: string): string => new URL(url).host;

export class SliceRun {
  private readonly input: SliceInput;
  private readonly pacer: Pacer<number>;
  private leadMs = 0;
  private slotLead = false;
  /** captures in flight that said where they run, by page: a capture may be handed over behind them */
  private readonly startedOn = new Map<number, CaptureStarted>();
  /** pages with a capture handed over behind theirs */
  private readonly followed = new Set<number>();
  private readonly results = new Map<number, PageOutcome>();
  private readonly attempts = new Map<number, number>();
  /** pages whose host slot is held, by the attempt holding it */
  private readonly holding = new Map<number, number>();
  private readonly lastFinish = new Map<string, number>();
  /** payloads stored by earlier pages of the crawl: each capture is told the most used */
  private readonly payloads: PayloadIndex;
  private changed = false;
  /** captures whose activity has not answered yet (some may be past their host's part) */
  private active = 0;

  constructor(input: SliceInput) {
    this.input = input;
    this.payloads = new PayloadIndex(input.known ?? []);
    this.pacer = new Pacer<number>({
      perHostDelayMs: input.perHostDelayMs,
      hostParallelism: input.slots,
      notBefore: input.notBefore,
      rule: patched(LEAST_BOUND_PATCH) ? 'least-bound' : 'earliest-start',
    });
    input.pages.forEach((p, j) => this.pacer.add(hostOf(p.url), j));
  }

  async run(): Promise<void> {
    if (patched(CAPTURE_LEAD_PATCH)) this.leadMs = Math.min(MAX_CAPTURE_LEAD_MS, Math.max(0, this.input.perHostDelayMs));
    // one slot only: with two or more, a capture bound behind one that runs long waits while
    // another slot frees (measured on the pacing bench: 1.11–1.16 of the bound at 2 slots with the
    // lead, 1.07 without), whereas one slot has no other to wait for
    this.slotLead = this.input.slots === 1 && patched(SLOT_LEAD_PATCH);
    const running = new Set<Promise<void>>();
    for (;;) {
      const now = Date.now();
      for (const [s, ahead] of [...this.pacer.take(now, this.leadMs).map((t) => [t, undefined] as const), ...this.takeBehind(now)]) {
        // taken ahead of its host's ready time, which falls past the deadline
        if (s.at > now && s.at > this.input.startBy) {
          this.tooLate(s, s.at);
          continue;
        }
        const p: Promise<void> = this.capture(s, ahead).finally(() => running.delete(p));
        running.add(p);
      }
      if (this.finished()) break;
      const wake = this.pacer.nextWakeAt();
      if (wake !== undefined && wake > this.input.startBy) {
        // every host still waiting wakes too late for the deadline: their pages fail now
        for (const s of this.pacer.take(wake)) this.tooLate(s, this.pacer.readyAt(s.host));
        continue;
      }
      this.changed = false;
      // the way out is part of the condition: a capture that settles ends the wait by itself
      const woken = (): boolean => this.changed || this.finished();
      if (wake === undefined) await condition(woken);
      else await condition(woken, Math.max(1, wake - this.leadMs - Date.now()));
    }
    await Promise.all(running);
  }

  /** every page settled: nothing queued, no host held, no capture still packaging */
  private finished(): boolean {
    return this.pacer.done && this.active === 0;
  }

  /** Every slot in use: captures to hand over behind those that said where they run, so each
   * starts on that worker the moment the one ahead ends its host's part, not a round trip later. */
  private takeBehind(now: number): (readonly [Started<number>, Ahead])[] {
    if (!this.slotLead) return [];
    const ahead = [...this.startedOn.values()].filter((c) => this.holding.get(c.index) === c.attempt && !this.followed.has(c.index));
    if (ahead.length === 0) return [];
    // a host has one capture in flight at most: the host names the capture ahead
    const byHost = new Map(ahead.map((c) => [hostOf(this.input.pages[c.index]!.url), c]));
    return this.pacer.takeBehind(now, [...byHost.keys()], this.leadMs).map((s) => {
      const a = byHost.get(s.behind)!;
      this.followed.add(a.index);
      return [s, { index: a.index, attempt: a.attempt, queue: a.workerQueue }] as const;
    });
  }

  /** the capture worker's word that a capture started, and where */
  captureStarted(d: CaptureStarted): void {
    if (this.holding.get(d.index) !== d.attempt) return;
    this.startedOn.set(d.index, d);
    this.changed = true;
  }

  /** the capture worker's word that the host's part of a capture ended */
  hostDone(d: HostDone): void {
    if (this.holding.get(d.index) !== d.attempt) return;
    this.finishHost(d.index, d.finishedAt, d.finishedAt - d.submittedAt);
  }

  result(): SliceResult {
    const pages = this.input.pages.map(
      (p, j) => this.results.get(j) ?? { index: p.index, url: p.url, status: 'failed' as const, manifestError: 'the capture flow never settled this page' },
    );
    const hosts = [...this.lastFinish].map(([host, at]) => ({ host, delayMs: Math.round(this.pacer.delayFor(host)), lastFinishedAt: at }));
    return { pages, hosts, payloads: this.payloads.top(DEDUP_LIMITS.indexed) };
  }

  progress(): {
    pagesTotal: number;
    pagesDone: number;
    pagesInFlight: number;
    hosts: { host: string; queued: number; inFlight: number; nextAllowedAt: string | null }[];
  } {
    return {
      pagesTotal: this.input.pages.length,
      pagesDone: this.results.size,
      pagesInFlight: this.pacer.running,
      hosts: this.pacer.snapshot().map((h) => ({ ...h, nextAllowedAt: h.nextAllowedAt === null ? null : new Date(h.nextAllowedAt).toISOString() })),
    };
  }

  private async capture({ host, item, at }: Started<number>, ahead?: Ahead): Promise<void> {
    const page = this.input.pages[item]!;
    const attempt = (this.attempts.get(item) ?? 0) + 1;
    this.attempts.set(item, attempt);
    this.holding.set(item, attempt);
    this.active += 1;
    try {
      const out = await this.activities(ahead?.queue).capturePage({
        crawlId: this.input.crawlId,
        depth: this.input.depth,
        index: item,
        attempt,
        url: page.url,
        follow: page.follow,
        formats: this.input.formats,
        signing: this.input.signing,
        ...(this.input.qa === true ? { qa: true } : {}),
        ...(this.input.behaviors !== undefined ? { behaviors: this.input.behaviors } : {}),
        prefix: this.input.prefix,
        knobs: this.input.knobs,
        delayMs: this.pacer.delayFor(host),
        startAt: at,
        ...(ahead !== undefined ? { after: { index: ahead.index, attempt: ahead.attempt } } : {}),
        ...(this.lastFinish.has(host) ? { lastFinishedAt: this.lastFinish.get(host)! } : {}),
        startBy: this.input.startBy,
        finishBy: this.input.finishBy,
        ...(this.input.formats.includes('wacz') ? { known: this.payloads.top() } : {}),
      });
      this.settle(item, host, out);
    } catch (err) {
      if (ahead !== undefined && neverStarted(err)) this.backInLine(item, host, attempt);
      else this.retryOrFail(item, host, attempt, err);
    }
    this.active -= 1;
    this.changed = true;
  }

  private settle(item: number, host: string, out: CapturePageResult): void {
    const page = this.input.pages[item]!;
    if (out.crawlDelayMs !== undefined) this.pacer.setCrawlDelay(host, out.crawlDelayMs);
    if (out.kind === 'skipped') {
      this.releaseHost(item);
      this.results.set(item, { index: page.index, url: page.url, status: 'skipped', skipReason: 'robots' });
      return;
    }
    if (out.kind === 'too-late') {
      this.releaseHost(item);
      this.results.set(item, { index: page.index, url: page.url, status: 'failed', manifestError: tooLateMessage(host, out.readyAt, this.input.startBy) });
      return;
    }
    // normally the hostDone signal came first; a worker that could not send it is covered here
    if (this.holding.has(item)) this.finishHost(item, out.finishedAt, out.finishedAt - out.submittedAt);
    this.payloads.add(out.stored ?? []);
    this.payloads.used(out.revisited ?? []);
    const outcome: PageOutcome = { index: page.index, url: page.url, status: out.status, submittedAt: out.submittedAt, finishedAt: out.finishedAt };
    if (out.manifest) outcome.manifest = true;
    if (out.manifestVersion !== undefined) outcome.manifestVersion = out.manifestVersion;
    if (out.manifestError !== undefined) outcome.manifestError = out.manifestError;
    if (out.finalUrl !== undefined) outcome.finalUrl = out.finalUrl;
    this.results.set(item, outcome);
  }

  /** The worker died or timed out. Its last request reached the host no later than now, so the
   * host's spacing counts from now; the page goes back in line for another worker. */
  private retryOrFail(item: number, host: string, attempt: number, err: unknown): void {
    const page = this.input.pages[item]!;
    if (this.holding.get(item) === attempt) this.finishHost(item, Date.now());
    const why = err instanceof ActivityFailure && err.cause !== undefined ? err.cause.message : (err as Error).message;
    if (attempt < MAX_CAPTURE_ATTEMPTS && Date.now() < this.input.startBy) {
      this.pacer.add(host, item);
      return;
    }
    this.results.set(item, {
      index: page.index,
      url: page.url,
      status: 'failed',
      manifestError: `the capture was given up after ${attempt} attempt(s): ${why}`,
    });
  }

  /** Handed over behind a capture on a worker that never took it: nothing reached the host. */
  private backInLine(item: number, host: string, attempt: number): void {
    this.attempts.set(item, attempt - 1);
    this.releaseHost(item);
    this.pacer.putBack(host, item);
  }

  private letGo(item: number): void {
    this.holding.delete(item);
    this.startedOn.delete(item);
    this.followed.delete(item);
  }

  private finishHost(item: number, finishedAt: number, durationMs?: number): void {
    const host = hostOf(this.input.pages[item]!.url);
    this.letGo(item);
    this.pacer.finish(host, finishedAt, durationMs);
    this.lastFinish.set(host, Math.max(this.lastFinish.get(host) ?? 0, finishedAt));
    this.changed = true;
  }

  private releaseHost(item: number): void {
    if (!this.holding.has(item)) return;
    this.letGo(item);
    this.pacer.release(hostOf(this.input.pages[item]!.url));
    this.changed = true;
  }

  private tooLate(s: Started<number>, readyAt: number): void {
    const page = this.input.pages[s.item]!;
    this.pacer.release(s.host);
    this.results.set(s.item, { index: page.index, url: page.url, status: 'failed', manifestError: tooLateMessage(s.host, readyAt, this.input.startBy) });
  }

  /** on the capture queue, or on one worker's own queue for a capture handed over behind another */
  private activities(workerQueue?: string): CaptureActivities {
    const left = Math.max(1000, this.input.finishBy - Date.now()) + PACKAGING_MS;
    return proxyActivities<CaptureActivities>({
      taskQueue: workerQueue ?? this.input.captureQueue,
      ...(workerQueue !== undefined ? { scheduleToStartTimeout: BEHIND_START_TIMEOUT_MS } : {}),
      scheduleToCloseTimeout: left,
      heartbeatTimeout: CAPTURE_HEARTBEAT_TIMEOUT_MS,
      // a retry is the slice's: it must be paced like any other capture on the host
      retry: { maximumAttempts: 1 },
    });
  }
}

function neverStarted(err: unknown): boolean {
  return err instanceof ActivityFailure && err.cause instanceof TimeoutFailure && err.cause.timeoutType === 'SCHEDULE_TO_START';
}

export function tooLateMessage(host: string, readyAt: number, startBy: number): string {
  return `${host} cannot start before the level's deadline: its next capture may start at ${new Date(readyAt).toISOString()} (Crawl-delay, notBefore or the per-host delay), pages had to start by ${new Date(startBy).toISOString()}`;
}

export async function captureSlice(input: SliceInput): Promise<SliceResult> {
  const slice = new SliceRun(input);
  setHandler(hostDoneSignal, (d) => slice.hostDone(d));
  setHandler(captureStartedSignal, (d) => slice.captureStarted(d));
  setHandler(sliceProgressQuery, () => slice.progress());
  await slice.run();
  return slice.result();
}
