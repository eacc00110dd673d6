// outboxDrain: run by the `outbox-drain` schedule every minute (created by the worker). Delivers
// queued tuples to OpenFGA; when OpenFGA is down the activity's retries run out and the rows
// simply stay queued for the next run.
import { proxyActivities } from '@temporalio/workflow';
import type { Activities } from '../activities/index.ts';
import type { DrainResult } from '../fga/outbox.ts';

export async function outboxDrain(): Promise<DrainResult> {
  const { deliverTuples } = proxyActivities<Activities>({
    startToCloseTimeout: '5 minutes',
    retry: { initialInterval: '2 seconds', backoffCoefficient: 2, maximumInterval: '20 seconds', maximumAttempts: 4 },
  });
  return deliverTuples();
}
