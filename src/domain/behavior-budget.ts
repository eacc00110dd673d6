// How long a capture's in-page behaviors may run: the crawl's behaviorsSeconds, cut so that what
// comes after them (reading the page, rendering its screenshots and mhtml, packaging) still fits
// in the capture's deadline. A budget too short for the behaviors to do anything is none at all.
import type { DispatchBody } from './contract.ts';
import { BEHAVIOR_DEFAULTS } from './crawl.ts';

/** What every capture of a level runs in the page after load: seconds of budget, site-specific ones or not. */
export type CaptureBehaviors = NonNullable<DispatchBody['behaviors']>;

/** The dispatch's behaviors; a dispatch without them (a ledger from before) gets the defaults. */
export function dispatchBehaviors(d: Pick<DispatchBody, 'behaviors'>): CaptureBehaviors {
  return d.behaviors ?? { seconds: BEHAVIOR_DEFAULTS.behaviorsSeconds, siteSpecific: BEHAVIOR_DEFAULTS.siteBehaviors };
}

/** What the capture keeps of its deadline for reading and rendering once behaviors are over. */
export const BEHAVIOR_RESERVE_MS = 5_000;
/** How long past its own timeout the flow waits for the behaviors to hand back (then it goes on). */
export const BEHAVIOR_GRACE_MS = 1_000;
/**
 * Shorter budgets run nothing. Why: the library's run() waits 500 ms after starting the behaviors
 * before it looks at them, and its autoscroll spends another 500 ms finding out whether the page
 * scrolls at all.
 */
export const MIN_BEHAVIOR_MS = 1_000;

/** ms the behaviors may take, given the crawl's seconds and what is left of the deadline; 0: run none. */
export function behaviorBudgetMs(seconds: number, leftMs: number): number {
  const wanted = Math.max(0, Math.floor(seconds)) * 1000;
  const room = Math.floor(leftMs) - BEHAVIOR_RESERVE_MS - BEHAVIOR_GRACE_MS;
  const budget = Math.min(wanted, room);
  return budget >= MIN_BEHAVIOR_MS ? budget : 0;
}
