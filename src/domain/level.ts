// A crawl level's own rules, decided without I/O and each in one place: where its artifacts go
// (its prefix), until when it may be reported (its deadline), how often (its report slots), and
// how often its heartbeats reach the workflow (liveness). The ledger's record of a level and the
// checks made against it are src/ledger/level.ts; the capability's bytes src/ledger/capability.ts.
//
// Who uses what: the dispatch activity (levelPrefix, levelDeadline, through ledger/level.ts
// openLevel), the API (ledger/level.ts: the capability gate, takeReport, heartbeat turns),
// admission (the recorded prefix), the workflow (isPastDeadline), the capture flow (levelPrefix as
// the fallback of a dispatch without artifactPrefix).
import { LIVENESS_DEFAULTS } from './liveness.ts';

/** A level may be reported this many times (a first report and its corrections); then 409. */
export const MAX_REPORTS_PER_LEVEL = 5;

/** Where the ledger asks the flow to write a level's artifacts and manifests. Ends with '/'. */
export function levelPrefix(crawlId: string, depth: number): string {
  return `captures/${crawlId}/${depth}/`;
}

/** The level's deadline: `timeoutSeconds` after it is dispatched at `dispatchedAt` (ms). */
export function levelDeadline(dispatchedAt: number, timeoutSeconds: number): Date {
  return new Date(dispatchedAt + timeoutSeconds * 1000);
}

/**
 * Whether a level is past its deadline at `now` (ms): a report arriving then is refused and none
 * is admitted. Reaching the deadline's millisecond is not past it. An unknown deadline (a history
 * recorded before deadlines existed) never passes.
 */
export function isPastDeadline(deadline: Date | number | undefined, now: number): boolean {
  if (deadline === undefined) return false;
  return now > (typeof deadline === 'number' ? deadline : deadline.getTime());
}

/**
 * The least time between two heartbeats of a level passed on to the workflow: a quarter of the
 * liveness window, so a level whose flow is alive is never taken for silent, while a flow that
 * beats every few seconds (or floods) adds at most a few signals a minute to the history.
 */
export function heartbeatGapMs(livenessWindowSeconds: number | undefined): number {
  return ((livenessWindowSeconds ?? LIVENESS_DEFAULTS.windowSeconds) * 1000) / 4;
}
