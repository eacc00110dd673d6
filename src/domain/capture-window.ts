// When one page's capture may start and how long it may take: the host's delay (the slice's, or a
// longer robots.txt Crawl-delay), the host's ready time after its last finish, and the visit's
// deadline, cut to what is left of the level's window.

/** A visit's deadline is never shorter than this, however little of the window is left. */
export const MIN_VISIT_DEADLINE_MS = 1000;

/** The delay kept on the host: the slice's, or the Crawl-delay robots.txt asks for when it is longer. */
export function hostDelayMs(sliceDelayMs: number, crawlDelayMs: number | undefined): number {
  return Math.max(sliceDelayMs, crawlDelayMs ?? 0);
}

/** When the host is ready for the next visit (ms): its last finish plus its delay; 0 when nothing finished yet. */
export function hostReadyAt(lastFinishedAt: number | undefined, delayMs: number): number {
  return lastFinishedAt === undefined ? 0 : lastFinishedAt + delayMs;
}

/** The visit's deadline: the one asked for, cut to the window's end (finishBy), whole ms, at least MIN_VISIT_DEADLINE_MS. */
export function visitDeadlineMs(askedMs: number, finishBy: number, now: number): number {
  return Math.max(MIN_VISIT_DEADLINE_MS, Math.floor(Math.min(askedMs, finishBy - now)));
}
