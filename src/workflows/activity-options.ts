// How long each of the crawl workflow's activities may take and how it is retried, in one place.
// Errors of a NON_RETRYABLE type are final wherever a policy lists them: the activity has said that
// trying again cannot help.
import type { ActivityOptions } from '@temporalio/workflow';
import { NON_RETRYABLE } from '../../temporal.config.ts';

const NON_RETRYABLE_TYPES = Object.values(NON_RETRYABLE);

/** beginCrawl and finishCrawl: one row read or written, retried until the database answers. */
export const CONTROL_OPTIONS: ActivityOptions = {
  startToCloseTimeout: '1 minute',
  retry: { initialInterval: '1 second', maximumInterval: '30 seconds' },
};

/** dispatchLevel: a webhook POST; after `attempts` tries (default 5) the crawl fails. */
export function dispatchOptions(attempts = 5): ActivityOptions {
  return {
    startToCloseTimeout: '1 minute',
    retry: {
      initialInterval: '1 second',
      backoffCoefficient: 2,
      maximumInterval: '30 seconds',
      maximumAttempts: attempts,
      nonRetryableErrorTypes: NON_RETRYABLE_TYPES,
    },
  };
}

/** admitLevel: reads a level's manifests and writes its rows; a large level takes minutes. */
export const ADMIT_OPTIONS: ActivityOptions = {
  startToCloseTimeout: '10 minutes',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '1 minute', maximumAttempts: 10, nonRetryableErrorTypes: NON_RETRYABLE_TYPES },
};

/** deliverTuples: a few tries only; what is left the outbox-drain schedule delivers. */
export const DELIVER_OPTIONS: ActivityOptions = {
  startToCloseTimeout: '2 minutes',
  retry: { initialInterval: '1 second', maximumAttempts: 3 },
};

/** indexCrawl, once the row is finished: its failure leaves the crawl to indexPending. */
export const INDEX_OPTIONS: ActivityOptions = {
  startToCloseTimeout: '30 minutes',
  retry: { initialInterval: '5 seconds', backoffCoefficient: 2, maximumInterval: '1 minute', maximumAttempts: 3 },
};
