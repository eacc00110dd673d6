// Per-host pacing (spec "Not overloading the other end", "The pacing is measured, not assumed").
//
// Pure: no clock, no timers, no I/O. Time is a number of milliseconds passed in by the caller, so
// the same scheduler runs the real capture flow (Date.now()) and a simulation in virtual time
// (tests, the pacing benchmark).
//
// The rules it keeps:
// - one capture at a time per host, and the next one on a host is submitted no earlier than the
//   FINISH of the previous one plus the host's delay. How long a capture takes is not known up
//   front, so a gap measured from the submit would say nothing about what the other end feels;
// - the host's delay is perHostDelayMs, or the robots.txt Crawl-delay when that is longer (a value
//   the other end states is not ours to shorten);
// - at most hostParallelism distinct hosts are being captured at once;
// - nothing is submitted on a host before its notBefore (last finish on that host in an earlier
//   level + delay, sent by the ledger so spacing also holds across levels).
//
// Which hosts get the free slots is host-choice.ts's: by default the one after whose start the
// makespan's lower bound (the longest per-host chain, the work left over the slots) is least,
// which is the host that may start earliest unless that would push a longer chain back by a
// whole capture; slices from before it ran with 'earliest-start' and replay with it.
//
// take() may look ahead (leadMs): a host whose ready time comes within the lead is given a slot
// now, with the time it may be submitted. A caller whose captures take a while to get going (a
// durable timer, a task queue, a worker) hands the capture over that much early and the capture
// waits out the rest itself, so the host's spacing is not stretched by the hand-over.

import { chooseHosts, type HostChoiceRule, type WaitingHost } from './host-choice.ts';

export interface PacingOptions {
  perHostDelayMs: number;
  /** how many distinct hosts may be captured at once (≥ 1) */
  hostParallelism: number;
  /** per host (with port): earliest submit time, ms since the epoch */
  notBefore?: Record<string, number>;
  /** per host: robots.txt Crawl-delay in ms; wins when longer than perHostDelayMs */
  crawlDelayMs?: Record<string, number>;
  /** per host: the last finish this process saw (e.g. from an earlier level), ms */
  lastFinish?: Record<string, number>;
  /** how free slots are given out (host-choice.ts); default 'least-bound' */
  rule?: HostChoiceRule;
}

/** The gap a host needs between one capture's finish and the next submit. */
export function effectiveDelayMs(perHostDelayMs: number, crawlDelayMs: number | undefined): number {
  const own = Math.max(0, perHostDelayMs);
  return crawlDelayMs !== undefined && Number.isFinite(crawlDelayMs) && crawlDelayMs > own ? crawlDelayMs : own;
}

interface HostState<T> {
  host: string;
  order: number;
  queue: T[];
  inFlight: boolean;
  lastFinish: number | undefined;
  notBefore: number;
  crawlDelayMs: number | undefined;
  /** total observed capture time and count, for the remaining-work estimate */
  busyMs: number;
  captures: number;
  /** when the capture in flight may have started (take's `at`) */
  startedAt: number;
}

export interface Started<T> {
  host: string;
  item: T;
  /** when it may be submitted: the take's `now`, or the host's ready time when that is later */
  at: number;
}

export class Pacer<T> {
  private readonly hosts = new Map<string, HostState<T>>();
  private inFlight = 0;
  private readonly perHostDelayMs: number;
  private readonly parallelism: number;
  private readonly rule: HostChoiceRule;

  private readonly opts: PacingOptions;

  constructor(opts: PacingOptions) {
    this.opts = opts;
    if (!Number.isFinite(opts.perHostDelayMs) || opts.perHostDelayMs < 0) throw new RangeError(`perHostDelayMs must be ≥ 0, got ${opts.perHostDelayMs}`);
    if (!Number.isInteger(opts.hostParallelism) || opts.hostParallelism < 1)
      throw new RangeError(`hostParallelism must be an integer ≥ 1, got ${opts.hostParallelism}`);
    this.perHostDelayMs = opts.perHostDelayMs;
    this.parallelism = opts.hostParallelism;
    this.rule = opts.rule ?? 'least-bound';
  }

  private state(host: string): HostState<T> {
    let s = this.hosts.get(host);
    if (s === undefined) {
      s = {
        host,
        order: this.hosts.size,
        queue: [],
        inFlight: false,
        lastFinish: this.opts.lastFinish?.[host],
        notBefore: this.opts.notBefore?.[host] ?? -Infinity,
        crawlDelayMs: this.opts.crawlDelayMs?.[host],
        busyMs: 0,
        captures: 0,
        startedAt: 0,
      };
      this.hosts.set(host, s);
    }
    return s;
  }

  /** Queue an item (a page) on a host. Items on one host start in the order they were added. */
  add(host: string, item: T): void {
    this.state(host).queue.push(item);
  }

  /** Record a robots.txt Crawl-delay (ms) learnt for a host; the longer of it and perHostDelayMs applies. */
  setCrawlDelay(host: string, ms: number | undefined): void {
    this.state(host).crawlDelayMs = ms;
  }

  delayFor(host: string): number {
    return effectiveDelayMs(this.perHostDelayMs, this.state(host).crawlDelayMs);
  }

  /** The earliest time the next capture on this host may be submitted. */
  readyAt(host: string): number {
    const s = this.state(host);
    const afterFinish = s.lastFinish === undefined ? -Infinity : s.lastFinish + this.delayFor(host);
    return Math.max(s.notBefore, afterFinish);
  }

  /** A host's expected capture time: its own mean; under 'least-bound', the mean over all hosts
   * until it has one (under 'earliest-start', 0, as slices that began with it ran). */
  private estimateMs(s: HostState<T>): number {
    if (s.captures > 0) return s.busyMs / s.captures;
    if (this.rule === 'earliest-start') return 0;
    let busy = 0;
    let n = 0;
    for (const h of this.hosts.values()) {
      busy += h.busyMs;
      n += h.captures;
    }
    return n > 0 ? busy / n : 0;
  }

  /**
   * Slots for what may be submitted by `now + leadMs`, marked in flight, each with the time it may
   * be submitted (the take's `now`, or the host's ready time when later). Which hosts get them is
   * the rule's (host-choice.ts). Call again after each finish.
   */
  take(now: number, leadMs = 0): Started<T>[] {
    if (this.inFlight >= this.parallelism) return [];
    return this.choose(now, now, now + Math.max(0, leadMs), this.parallelism - this.inFlight);
  }

  /**
   * Slot lead: when every slot is in use, hosts to hand over behind captures in flight (those on
   * the `ahead` hosts), each to start the moment the capture ahead of it ends its host's part (the
   * caller's worker holds it until then) and no sooner than its host's ready time. One behind each,
   * in the order the captures ahead are expected to end, each chosen as take() would choose for the
   * slot that capture frees, among hosts ready by then plus the lead, and marked in flight: once
   * the captures ahead finish, the hosts at once are hostParallelism again. Pairing each with the
   * capture whose end it was chosen for matters: one bound behind a capture that ends later than
   * another slot frees would wait for nothing.
   */
  takeBehind(now: number, ahead: readonly string[], leadMs = 0): (Started<T> & { behind: string })[] {
    if (this.inFlight < this.parallelism) return [];
    const endOf = (host: string): number => {
      const s = this.hosts.get(host);
      return s?.inFlight === true ? s.startedAt + this.estimateMs(s) : Infinity;
    };
    const order = [...new Set(ahead)].filter((h) => Number.isFinite(endOf(h))).sort((x, y) => endOf(x) - endOf(y));
    const out: (Started<T> & { behind: string })[] = [];
    for (const behind of order) {
      if (this.inFlight >= 2 * this.parallelism) break;
      const from = Math.max(now, endOf(behind));
      const [s] = this.choose(now, from, from + Math.max(0, leadMs), 1);
      if (s === undefined) break;
      out.push({ ...s, behind });
    }
    return out;
  }

  /** Put an item back at the head of its host's queue (a hand-over that never reached a worker). */
  putBack(host: string, item: T): void {
    this.state(host).queue.unshift(item);
  }

  /** `at` of each chosen host is its ready time or `now`; it is expected to start at `from` at the earliest. */
  private choose(now: number, from: number, horizon: number, free: number): Started<T>[] {
    const waiting: WaitingHost[] = [];
    const busyUntil: number[] = [];
    for (const s of this.hosts.values()) {
      if (s.inFlight) busyUntil.push(s.startedAt + this.estimateMs(s));
      else if (s.queue.length > 0)
        waiting.push({
          host: s.host,
          order: s.order,
          readyAt: this.readyAt(s.host),
          pages: s.queue.length,
          estMs: this.estimateMs(s),
          delayMs: this.delayFor(s.host),
        });
    }
    const chosen = chooseHosts(waiting, { now: from, horizon, free, parallelism: this.parallelism, busyUntil }, this.rule);
    return chosen.map((w) => {
      const s = this.hosts.get(w.host)!;
      const item = s.queue.shift() as T;
      const at = Math.max(now, w.readyAt);
      s.inFlight = true;
      s.startedAt = Math.max(from, at);
      this.inFlight++;
      return { host: s.host, item, at };
    });
  }

  /** The capture on `host` finished at `finishedAt` (its duration feeds the work estimate). */
  finish(host: string, finishedAt: number, durationMs?: number): void {
    const s = this.state(host);
    if (!s.inFlight) throw new Error(`finish on ${host}, which has nothing in flight`);
    s.inFlight = false;
    this.inFlight--;
    s.lastFinish = s.lastFinish === undefined ? finishedAt : Math.max(s.lastFinish, finishedAt);
    if (durationMs !== undefined && durationMs >= 0) {
      s.busyMs += durationMs;
      s.captures++;
    }
  }

  /** The slot on `host` ended without a capture (e.g. robots.txt said no): no finish is recorded. */
  release(host: string): void {
    const s = this.state(host);
    if (!s.inFlight) throw new Error(`release on ${host}, which has nothing in flight`);
    s.inFlight = false;
    this.inFlight--;
  }

  /**
   * When to call take() next if nothing finishes before then: the earliest readyAt among hosts
   * waiting with work, or undefined when only a finish can unblock anything (or all is done).
   */
  nextWakeAt(): number | undefined {
    if (this.inFlight >= this.parallelism) return undefined;
    let best: number | undefined;
    for (const s of this.hosts.values()) {
      if (s.inFlight || s.queue.length === 0) continue;
      const r = this.readyAt(s.host);
      if (best === undefined || r < best) best = r;
    }
    return best;
  }

  get running(): number {
    return this.inFlight;
  }

  get pending(): number {
    let n = 0;
    for (const s of this.hosts.values()) n += s.queue.length;
    return n;
  }

  get done(): boolean {
    return this.inFlight === 0 && this.pending === 0;
  }

  /** Per host, as a heartbeat reports it: pages queued, whether one is in flight, and when the
   * next capture may start (null: nothing recorded yet, it may start at once). */
  snapshot(): { host: string; queued: number; inFlight: number; nextAllowedAt: number | null }[] {
    return [...this.hosts.values()].map((s) => {
      const ready = this.readyAt(s.host);
      return { host: s.host, queued: s.queue.length, inFlight: s.inFlight ? 1 : 0, nextAllowedAt: Number.isFinite(ready) ? ready : null };
    });
  }

  /** Last recorded finish per host (to carry spacing into the next level). */
  lastFinishes(): Record<string, number> {
    const out: Record<string, number> = {};
    for (const s of this.hosts.values()) if (s.lastFinish !== undefined) out[s.host] = s.lastFinish;
    return out;
  }
}

// --- simulation and checking (tests, benchmark, and checking real timestamps) --------------------

export interface SimPage {
  host: string;
  /** how long the capture takes once submitted */
  durationMs: number;
}

export interface Capture {
  host: string;
  start: number;
  finish: number;
}

export interface SimResult extends Capture {
  index: number;
}

/** Runs the Pacer in virtual time from `t0` over pages with known durations; with `leadMs`, a
 * capture is handed over that early and starts at its host's ready time (as the flow's are); with
 * `handoverMs`, no capture starts sooner than that after it was taken (the flow's timer, workflow
 * task and worker poll); with `slotLead`, a capture that has started gets one to follow it when
 * every slot is in use (takeBehind), which starts the moment it ends (as on the flow's workers). */
export function simulatePacing(pages: SimPage[], opts: PacingOptions, t0 = 0, leadMs = 0, handoverMs = 0, slotLead = false): SimResult[] {
  const pacer = new Pacer<number>(opts);
  pages.forEach((p, i) => pacer.add(p.host, i));
  const results: SimResult[] = [];
  const running: { host: string; index: number; start: number; finish: number; followed: boolean }[] = [];
  let now = t0;
  for (;;) {
    for (const s of pacer.take(now, leadMs)) {
      const start = Math.max(s.at, now + handoverMs);
      running.push({ host: s.host, index: s.item, start, finish: start + pages[s.item]!.durationMs, followed: false });
    }
    // slot lead: behind a capture in flight, started where it ends, with no hand-over
    const ahead = new Map(slotLead ? running.filter((r) => !r.followed && r.start <= now && r.finish > now).map((r) => [r.host, r]) : []);
    pacer.takeBehind(now, [...ahead.keys()], leadMs).forEach((s) => {
      const a = ahead.get(s.behind)!;
      a.followed = true;
      const start = Math.max(s.at, a.finish, now + handoverMs);
      running.push({ host: s.host, index: s.item, start, finish: start + pages[s.item]!.durationMs, followed: false });
    });
    if (pacer.done) break;
    const nextFinish = running.length > 0 ? Math.min(...running.map((r) => r.finish)) : Infinity;
    // with the slot lead, a start is an event too: a capture may go behind one once it has started
    const nextStart = Math.min(...running.filter((r) => slotLead && !r.followed && r.start > now).map((r) => r.start));
    const wake = pacer.nextWakeAt();
    const next = Math.min(nextFinish, nextStart, wake === undefined ? Infinity : Math.max(wake - leadMs, now));
    if (!Number.isFinite(next)) throw new Error('pacing simulation stalled');
    now = next;
    // finish everything due at `now`, in start order (deterministic)
    running.sort((a, b) => a.finish - b.finish || a.start - b.start || a.index - b.index);
    while (running.length > 0 && running[0]!.finish <= now) {
      const r = running.shift()!;
      pacer.finish(r.host, r.finish, r.finish - r.start);
      results.push({ host: r.host, index: r.index, start: r.start, finish: r.finish });
    }
  }
  return results.sort((a, b) => a.index - b.index);
}

export interface PacingViolation {
  kind: 'gap' | 'overlap' | 'parallelism' | 'notBefore';
  host: string;
  at: number;
  detail: string;
}

/**
 * Checks real or simulated captures against the rules: per host, ordered by submit, every gap
 * (submit − previous finish) ≥ that host's delay and never negative; no submit before notBefore;
 * never more than hostParallelism hosts captured at once.
 */
export function pacingViolations(captures: Capture[], opts: PacingOptions): PacingViolation[] {
  const out: PacingViolation[] = [];
  for (const [host, list] of capturesByHost(captures)) out.push(...hostViolations(host, list, opts));
  out.push(...parallelismViolations(captures, opts.hostParallelism));
  return out;
}

function capturesByHost(captures: Capture[]): Map<string, Capture[]> {
  const byHost = new Map<string, Capture[]>();
  for (const c of captures) {
    const list = byHost.get(c.host) ?? [];
    list.push(c);
    byHost.set(c.host, list);
  }
  return byHost;
}

/** One host's captures (sorted here by submit): notBefore, the gap after an earlier level's last
 * finish, and the gap between each capture and the one before. */
function hostViolations(host: string, list: Capture[], opts: PacingOptions): PacingViolation[] {
  const out: PacingViolation[] = [];
  list.sort((a, b) => a.start - b.start);
  const delay = effectiveDelayMs(opts.perHostDelayMs, opts.crawlDelayMs?.[host]);
  const first = list[0]!.start;
  const nb = opts.notBefore?.[host];
  if (nb !== undefined && first < nb) out.push({ kind: 'notBefore', host, at: first, detail: `submitted ${nb - first} ms before notBefore` });
  const prior = opts.lastFinish?.[host];
  if (prior !== undefined && first - prior < delay)
    out.push({ kind: 'gap', host, at: first, detail: `gap ${first - prior} ms after an earlier finish < ${delay} ms` });
  for (let i = 1; i < list.length; i++) {
    const gap = list[i]!.start - list[i - 1]!.finish;
    if (gap < 0) out.push({ kind: 'overlap', host, at: list[i]!.start, detail: `overlaps the previous capture by ${-gap} ms` });
    else if (gap < delay) out.push({ kind: 'gap', host, at: list[i]!.start, detail: `gap ${gap} ms < ${delay} ms` });
  }
  return out;
}

/**
 * At each submit: the captures in flight then, itself included even when it takes no time.
 * Timestamps are whole ms: a capture that took no time and another submitted at that same
 * instant are taken to have run one after the other.
 */
function parallelismViolations(captures: Capture[], hostParallelism: number): PacingViolation[] {
  const out: PacingViolation[] = [];
  const sorted = [...captures].sort((a, b) => a.start - b.start);
  for (const c of sorted) {
    const n = inFlightAt(sorted, c);
    if (n > hostParallelism) out.push({ kind: 'parallelism', host: c.host, at: c.start, detail: `${n} captures in flight > ${hostParallelism}` });
  }
  return out;
}

function inFlightAt(sorted: Capture[], c: Capture): number {
  let n = 1;
  for (const o of sorted) {
    if (o.start > c.start) break;
    if (o === c || o.finish <= c.start) continue;
    if (o.start === c.start && c.finish === c.start) continue;
    n++;
  }
  return n;
}

/**
 * The politeness lower bound on the makespan from `t0`: no schedule that keeps the rules can
 * finish earlier. Per host, its captures back to back with exactly the delay between them,
 * starting no earlier than notBefore; and the total capture time spread over hostParallelism slots.
 */
export function politenessLowerBound(pages: SimPage[], opts: PacingOptions, t0 = 0): number {
  const byHost = new Map<string, number[]>();
  for (const p of pages) byHost.set(p.host, [...(byHost.get(p.host) ?? []), p.durationMs]);
  let bound = t0;
  let total = 0;
  for (const [host, durations] of byHost) {
    const delay = effectiveDelayMs(opts.perHostDelayMs, opts.crawlDelayMs?.[host]);
    const work = durations.reduce((a, b) => a + b, 0);
    total += work;
    const prior = opts.lastFinish?.[host];
    const start = Math.max(t0, opts.notBefore?.[host] ?? -Infinity, prior === undefined ? -Infinity : prior + delay);
    bound = Math.max(bound, start + work + (durations.length - 1) * delay);
  }
  return Math.max(bound, t0 + total / opts.hostParallelism);
}
