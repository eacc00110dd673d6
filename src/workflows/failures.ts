// What the crawl workflow reads from the failures its activities end with. Deterministic.
import { ActivityFailure, ApplicationFailure } from '@temporalio/workflow';
import { NON_RETRYABLE } from '../../temporal.config.ts';

/** The message of an activity failure's root cause, for crawls.failure. */
export function describe(err: unknown): string {
  let e = err as { message?: string; cause?: unknown } | undefined;
  const parts: string[] = [];
  for (let i = 0; e !== undefined && e !== null && i < 4; i += 1) {
    if (e.message) parts.push(e.message);
    e = e.cause as typeof e;
  }
  return (parts[parts.length - 1] ?? String(err)).slice(0, 1000);
}

/** admitLevel refused a report because a newer report of its level replaced it in the store. */
export function isStaleReport(err: unknown): boolean {
  return err instanceof ActivityFailure && err.cause instanceof ApplicationFailure && err.cause.type === NON_RETRYABLE.staleReport;
}
