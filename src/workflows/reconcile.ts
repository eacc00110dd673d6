// reconcile: run by the `reconcile` schedule once a day (created by the worker) and by hand with
// `temporal schedule trigger --schedule-id reconcile`. Registers the reported captures that did
// not make it into the ledger, then delivers their tuples so they are viewable right away (what
// is not delivered now stays queued for the outbox-drain schedule).
import { log, proxyActivities } from '@temporalio/workflow';
import type { Activities } from '../activities/index.ts';
import type { ReconcileInput, ReconcileResult } from '../activities/reconcile.ts';

export interface ReconcileWorkflowResult extends ReconcileResult {
  /** tuples delivered after registering; null when OpenFGA could not be reached (they stay queued) */
  tuplesDelivered: number | null;
}

export async function reconcile(input: ReconcileInput = {}): Promise<ReconcileWorkflowResult> {
  const { reconcileCaptures } = proxyActivities<Activities>({
    startToCloseTimeout: '1 hour',
    heartbeatTimeout: '5 minutes',
    retry: { initialInterval: '10 seconds', backoffCoefficient: 2, maximumInterval: '5 minutes', maximumAttempts: 5 },
  });
  const { deliverTuples } = proxyActivities<Activities>({
    startToCloseTimeout: '5 minutes',
    retry: { initialInterval: '2 seconds', backoffCoefficient: 2, maximumInterval: '20 seconds', maximumAttempts: 3 },
  });

  const result = await reconcileCaptures(input);
  log.info('reconciled', { ...result });
  if (result.unreadable > 0) log.warn('manifests unreadable; they stay pending for the next run', { unreadable: result.unreadable });

  let tuplesDelivered: number | null = null;
  if (result.registered > 0) {
    try {
      tuplesDelivered = (await deliverTuples()).delivered;
    } catch (err) {
      log.warn('tuple delivery deferred to the outbox-drain schedule', { error: (err as Error).message });
    }
  }
  return { ...result, tuplesDelivered };
}
