import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { BEHAVIOR_GRACE_MS, BEHAVIOR_RESERVE_MS, behaviorBudgetMs, dispatchBehaviors, MIN_BEHAVIOR_MS } from './behavior-budget.ts';
import { BEHAVIOR_DEFAULTS, CRAWL_LIMITS, resolveBehaviors } from './crawl.ts';

describe('behaviorBudgetMs', () => {
  it('is the crawl’s seconds when the deadline has room, cut to what the deadline leaves, none when too short', () => {
    expect(behaviorBudgetMs(10, 120_000)).toBe(10_000);
    expect(behaviorBudgetMs(0, 120_000)).toBe(0);
    expect(behaviorBudgetMs(120, 60_000)).toBe(60_000 - BEHAVIOR_RESERVE_MS - BEHAVIOR_GRACE_MS);
    expect(behaviorBudgetMs(10, 1_000)).toBe(0);
    expect(behaviorBudgetMs(10, BEHAVIOR_RESERVE_MS + BEHAVIOR_GRACE_MS + MIN_BEHAVIOR_MS)).toBe(MIN_BEHAVIOR_MS);
    expect(behaviorBudgetMs(10, BEHAVIOR_RESERVE_MS + BEHAVIOR_GRACE_MS + MIN_BEHAVIOR_MS - 1)).toBe(0);
  });

  it('never asks for more than the crawl’s seconds, never leaves less than the reserve, and is none or at least the minimum', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: CRAWL_LIMITS.behaviorsSeconds }), fc.integer({ min: -10_000, max: 1_000_000 }), (seconds, left) => {
        const b = behaviorBudgetMs(seconds, left);
        expect(b).toBeLessThanOrEqual(seconds * 1000);
        expect(b === 0 || b >= MIN_BEHAVIOR_MS).toBe(true);
        if (b > 0) expect(b + BEHAVIOR_RESERVE_MS + BEHAVIOR_GRACE_MS).toBeLessThanOrEqual(left);
        // more time left never buys a shorter budget
        expect(behaviorBudgetMs(seconds, left + 1000)).toBeGreaterThanOrEqual(b);
      }),
    );
  });
});

describe('resolveBehaviors', () => {
  it('takes the request’s settings and defaults the rest', () => {
    expect(resolveBehaviors({ seeds: ['x'] })).toEqual({ behaviorsSeconds: BEHAVIOR_DEFAULTS.behaviorsSeconds, siteBehaviors: true });
    expect(resolveBehaviors({ seeds: ['x'], behaviorsSeconds: 0 })).toEqual({ behaviorsSeconds: 0, siteBehaviors: true });
    expect(resolveBehaviors({ seeds: ['x'], behaviorsSeconds: 30, siteBehaviors: false })).toEqual({ behaviorsSeconds: 30, siteBehaviors: false });
    expect(BEHAVIOR_DEFAULTS.behaviorsSeconds).toBeLessThanOrEqual(CRAWL_LIMITS.behaviorsSeconds);
  });
});

describe('dispatchBehaviors', () => {
  it('is the dispatch’s when it has them, the defaults when it has none (a ledger from before)', () => {
    expect(dispatchBehaviors({ behaviors: { seconds: 0, siteSpecific: false } })).toEqual({ seconds: 0, siteSpecific: false });
    expect(dispatchBehaviors({})).toEqual({ seconds: BEHAVIOR_DEFAULTS.behaviorsSeconds, siteSpecific: BEHAVIOR_DEFAULTS.siteBehaviors });
  });
});
