// When a dispatched level has gone quiet (issue 13, "a capture flow that restarts mid-level costs
// about a minute"). Pure, times in ms: the crawl workflow decides through these with its own
// deterministic clock.
//
// A flow that never sends a heartbeat is waited for until the level timeout, as before. Once a
// level has had a heartbeat, silence longer than the liveness window means the flow lost the
// level: it is dispatched again, at most maxRedispatches times, and then the crawl fails saying so.

import type { HeartbeatBody } from './contract.ts';

/** The heartbeat as the workflow is signalled with it: the body plus when the API received it. */
export interface LevelHeartbeat extends HeartbeatBody {
  receivedAt: string;
}

export const LIVENESS_DEFAULTS = { windowSeconds: 60, maxRedispatches: 3 } as const;

export interface LivenessPolicy {
  levelTimeoutMs: number;
  windowMs: number;
  maxRedispatches: number;
}

export interface LevelWatch {
  /** when the current dispatch of the level went out */
  dispatchedAt: number;
  /** the latest heartbeat of the level (a re-dispatch counts as one); undefined: none yet */
  lastBeatAt: number | undefined;
  /** re-dispatches so far */
  redispatches: number;
}

export type Expiry = { kind: 'level-timeout' | 'liveness'; at: number };

export type WaitEnded = { kind: 'wait'; until: number } | { kind: 'redispatch' } | { kind: 'fail'; failure: string };

export function watchFrom(dispatchedAt: number): LevelWatch {
  return { dispatchedAt, lastBeatAt: undefined, redispatches: 0 };
}

/** When waiting for the level's report must end if nothing arrives: whichever comes first. */
export function nextExpiry(w: LevelWatch, p: LivenessPolicy): Expiry {
  const timeout = w.dispatchedAt + p.levelTimeoutMs;
  if (w.lastBeatAt === undefined) return { kind: 'level-timeout', at: timeout };
  const quiet = w.lastBeatAt + p.windowMs;
  return quiet < timeout ? { kind: 'liveness', at: quiet } : { kind: 'level-timeout', at: timeout };
}

/** The wait ended at `now` with no report: wait on (a heartbeat moved the expiry), dispatch again, or fail. */
export function onWaitEnded(w: LevelWatch, p: LivenessPolicy, now: number, depth: number): WaitEnded {
  const e = nextExpiry(w, p);
  if (now < e.at) return { kind: 'wait', until: e.at };
  if (e.kind === 'level-timeout') return { kind: 'fail', failure: `level ${depth} was not reported within ${p.levelTimeoutMs / 1000}s` };
  if (w.redispatches < p.maxRedispatches) return { kind: 'redispatch' };
  return {
    kind: 'fail',
    failure: `level ${depth}: the capture flow sent no heartbeat for ${p.windowMs / 1000}s, ${p.maxRedispatches} re-dispatch${p.maxRedispatches === 1 ? '' : 'es'} did not bring it back`,
  };
}

/** A heartbeat arrived at `now`. */
export function beat(w: LevelWatch, now: number): LevelWatch {
  return { ...w, lastBeatAt: w.lastBeatAt === undefined ? now : Math.max(w.lastBeatAt, now) };
}

/** The level went out again at `now`: a fresh level timeout, and the liveness window starts over. */
export function redispatched(w: LevelWatch, now: number): LevelWatch {
  return { dispatchedAt: now, lastBeatAt: now, redispatches: w.redispatches + 1 };
}
