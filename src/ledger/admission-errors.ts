// How admission refuses a level. AdmissionError: the level cannot be admitted as stored (the
// activity turns it into a non-retryable failure). A stale report: the level was reported again
// after the admission was asked for, so what it was asked to admit is no longer the level's word;
// the workflow admits the newer report when its own signal arrives.
import { ApplicationFailure } from '@temporalio/common';
import { NON_RETRYABLE } from '../../temporal.config.ts';

export class AdmissionError extends Error {
  override name = 'AdmissionError';
}

/** Non-retryable, type NON_RETRYABLE.staleReport; thrown before anything is written (or rolls it back). */
export function staleReport(crawlId: string, depth: number, asked: string, current: string): ApplicationFailure {
  return ApplicationFailure.create({
    type: NON_RETRYABLE.staleReport,
    nonRetryable: true,
    message: `report ${asked} of crawl ${crawlId} level ${depth} was replaced by report ${current}: nothing admitted`,
  });
}
