// Which waiting hosts get the free slots (src/domain/pacing.ts asks, at every take). Pure.
//
// 'earliest-start' (slices that began before 'least-bound' existed replay with it): in order of the
// time each host may start, ties to the longest remaining chain, then to the host seen first.
//
// 'least-bound': one slot at a time, the host after whose start the makespan's lower bound is
// least. That bound is the larger of (a) the chain of each host (its pages back to back with its
// delay between them) from the time it can start: the chosen host at its start, every other one
// at its ready time and, when this was the last free slot, no earlier than the first slot expected
// to free again; and (b) the work left spread over the slots, with the slot's wait (chosen host
// not ready yet) counted as work. A host ready now is taken unless waiting a little for another
// is what keeps a longer chain from being pushed back by a whole capture: earliest-start's loss
// when captures take longer than the delay and the slots are fewer than the hosts.

export type HostChoiceRule = 'earliest-start' | 'least-bound';

export interface WaitingHost {
  host: string;
  /** first seen, for ties */
  order: number;
  readyAt: number;
  /** pages queued */
  pages: number;
  /** expected capture time of one page, ms */
  estMs: number;
  delayMs: number;
}

export interface ChoiceState {
  now: number;
  /** hosts with a slot may be given one when ready by this time (now + lead) */
  horizon: number;
  /** slots free now */
  free: number;
  parallelism: number;
  /** expected finish of each capture in flight */
  busyUntil: readonly number[];
}

/** From its next start to its last finish, if nothing holds it up. */
export function chainMs(h: WaitingHost): number {
  return h.pages * h.estMs + Math.max(0, h.pages - 1) * h.delayMs;
}

const startOf = (h: WaitingHost, now: number): number => Math.max(now, h.readyAt);

/** The hosts to start, in the order they were chosen (at most `free`, only ones ready by the horizon). */
export function chooseHosts(waiting: readonly WaitingHost[], state: ChoiceState, rule: HostChoiceRule): WaitingHost[] {
  if (state.free <= 0) return [];
  if (rule === 'earliest-start') return earliestStart(waiting, state);
  return leastBound(waiting, state);
}

function earliestStart(waiting: readonly WaitingHost[], { now, horizon, free }: ChoiceState): WaitingHost[] {
  const work = (h: WaitingHost): number => h.pages * (h.estMs + h.delayMs);
  return waiting
    .filter((h) => h.readyAt <= horizon)
    .sort((a, b) => startOf(a, now) - startOf(b, now) || work(b) - work(a) || a.order - b.order)
    .slice(0, free);
}

/** the largest and second largest of a value over hosts, to get the largest over all hosts but one in O(1) */
interface Top2 {
  first: number;
  firstHost: string | undefined;
  second: number;
}

function top2(hosts: readonly WaitingHost[], value: (h: WaitingHost) => number): Top2 {
  const t: Top2 = { first: -Infinity, firstHost: undefined, second: -Infinity };
  for (const h of hosts) {
    const v = value(h);
    if (v > t.first) {
      t.second = t.first;
      t.first = v;
      t.firstHost = h.host;
    } else if (v > t.second) t.second = v;
  }
  return t;
}

const without = (t: Top2, host: string): number => (t.firstHost === host ? t.second : t.first);

function leastBound(waiting: readonly WaitingHost[], state: ChoiceState): WaitingHost[] {
  const { now, horizon, parallelism } = state;
  let rest = [...waiting];
  const busy = [...state.busyUntil];
  let work = rest.reduce((a, h) => a + h.pages * h.estMs, 0) + busy.reduce((a, f) => a + Math.max(0, f - now), 0);
  const out: WaitingHost[] = [];
  for (let slot = 0; slot < state.free; slot++) {
    const readyChain = top2(rest, (h) => h.readyAt + chainMs(h));
    const chain = top2(rest, chainMs);
    const lastSlot = slot === state.free - 1;
    let best: { h: WaitingHost; bound: number; start: number } | undefined;
    for (const h of rest) {
      if (h.readyAt > horizon) continue;
      const start = startOf(h, now);
      const slotFree = lastSlot ? Math.max(now, Math.min(start + h.estMs, ...busy)) : now;
      const others = Math.max(without(readyChain, h.host), slotFree + without(chain, h.host));
      const bound = Math.max(start + chainMs(h), others, now + (work + start - now) / parallelism);
      if (best === undefined || better({ h, bound, start }, best)) best = { h, bound, start };
    }
    if (best === undefined) break;
    out.push(best.h);
    rest = rest.filter((h) => h !== best.h);
    busy.push(best.start + best.h.estMs);
    work += best.start - now;
  }
  return out;
}

function better(a: { h: WaitingHost; bound: number; start: number }, b: { h: WaitingHost; bound: number; start: number }): boolean {
  if (a.bound !== b.bound) return a.bound < b.bound;
  if (a.start !== b.start) return a.start < b.start;
  const c = chainMs(a.h) - chainMs(b.h);
  if (c !== 0) return c > 0;
  return a.h.order < b.h.order;
}
