import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { beat, nextExpiry, onWaitEnded, redispatched, watchFrom, type LevelWatch, type LivenessPolicy } from './liveness.ts';

const policy: LivenessPolicy = { levelTimeoutMs: 1_800_000, windowMs: 60_000, maxRedispatches: 3 };

/** Runs the workflow's wait loop over heartbeat times (ms after the first dispatch, per dispatch). */
function simulate(p: LivenessPolicy, beatsPerDispatch: number[][]): { failure: string; at: number; redispatches: number; quietBeforeRedispatch: number[] } {
  let w: LevelWatch = watchFrom(0);
  let dispatch = 0;
  const quietBeforeRedispatch: number[] = [];
  const pending = () => (beatsPerDispatch[dispatch] ?? []).map((t) => w.dispatchedAt + t).filter((t) => t > (w.lastBeatAt ?? -1));
  for (let now = 0; ;) {
    const e = nextExpiry(w, p);
    const next = pending().find((t) => t >= now && t < e.at);
    if (next !== undefined) {
      now = next;
      w = beat(w, now);
      continue;
    }
    now = e.at;
    const step = onWaitEnded(w, p, now, 2);
    if (step.kind === 'fail') return { failure: step.failure, at: now, redispatches: w.redispatches, quietBeforeRedispatch };
    if (step.kind === 'redispatch') {
      quietBeforeRedispatch.push(now - (w.lastBeatAt ?? w.dispatchedAt));
      w = redispatched(w, now);
      dispatch += 1;
    }
  }
}

describe('liveness', () => {
  it('a flow that never sends a heartbeat is waited for until the level timeout, never dispatched again', () => {
    const r = simulate(policy, []);
    expect(r).toEqual({ failure: 'level 2 was not reported within 1800s', at: 1_800_000, redispatches: 0, quietBeforeRedispatch: [] });
  });

  it('silence after a heartbeat re-dispatches after the window, three times, then fails saying so', () => {
    const r = simulate(policy, [[5_000, 10_000]]);
    expect(r.redispatches).toBe(3);
    expect(r.quietBeforeRedispatch).toEqual([60_000, 60_000, 60_000]);
    expect(r.at).toBe(10_000 + 4 * 60_000);
    expect(r.failure).toBe('level 2: the capture flow sent no heartbeat for 60s, 3 re-dispatches did not bring it back');
  });

  it('a heartbeat before the expiry moves it: the wait goes on', () => {
    const w = beat(watchFrom(0), 50_000);
    expect(onWaitEnded(w, policy, 60_000, 0)).toEqual({ kind: 'wait', until: 110_000 });
    expect(nextExpiry(w, policy)).toEqual({ kind: 'liveness', at: 110_000 });
  });

  it('a late heartbeat never moves the liveness expiry past the level timeout', () => {
    const w = beat(watchFrom(0), 1_790_000);
    expect(nextExpiry(w, policy)).toEqual({ kind: 'level-timeout', at: 1_800_000 });
    expect(onWaitEnded(w, policy, 1_800_000, 0)).toEqual({ kind: 'fail', failure: 'level 0 was not reported within 1800s' });
  });

  it('a re-dispatch restarts the level timeout and the window; heartbeats out of order never move time back', () => {
    const w = redispatched(beat(watchFrom(0), 30_000), 90_000);
    expect(w).toEqual({ dispatchedAt: 90_000, lastBeatAt: 90_000, redispatches: 1 });
    expect(beat(beat(w, 100_000), 95_000).lastBeatAt).toBe(100_000);
  });

  it('one re-dispatch is said in the singular', () => {
    expect(simulate({ ...policy, maxRedispatches: 1 }, [[1]]).failure).toContain('1 re-dispatch did not');
  });

  it('for any heartbeats: at most maxRedispatches, each after at least the window of silence, and never later than the level timeout of its dispatch', () => {
    fc.assert(
      fc.property(
        fc.record({
          levelTimeoutMs: fc.integer({ min: 1_000, max: 100_000 }),
          windowMs: fc.integer({ min: 100, max: 50_000 }),
          maxRedispatches: fc.integer({ min: 0, max: 5 }),
        }),
        fc.array(
          fc.array(fc.integer({ min: 0, max: 120_000 }), { maxLength: 30 }).map((a) => [...a].sort((x, y) => x - y)),
          { maxLength: 7 },
        ),
        (p, beats) => {
          const r = simulate(p, beats);
          expect(r.redispatches).toBeLessThanOrEqual(p.maxRedispatches);
          for (const q of r.quietBeforeRedispatch) expect(q).toBeGreaterThanOrEqual(p.windowMs);
          if ((beats[0] ?? []).length === 0) expect(r.redispatches).toBe(0);
          expect(r.failure).toMatch(/^level 2 (was not reported within|: the capture flow sent no heartbeat)|^level 2: /);
        },
      ),
    );
  });
});
