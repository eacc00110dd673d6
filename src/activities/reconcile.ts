// The reconcile activity, run by the `reconcile` workflow (the daily `reconcile` schedule, or
// `temporal schedule trigger --schedule-id reconcile`). The logic is src/ledger/reconcile.ts;
// `npm run fga:reconcile` runs the same function without Temporal.
import { heartbeat, log } from '@temporalio/activity';
import type { S3Client } from '@aws-sdk/client-s3';
import type { Db } from '../db/connect.ts';
import { reconcile, type ReconcileResult } from '../ledger/reconcile.ts';

export interface ReconcileActivityDeps {
  db: Db;
  s3: S3Client;
  bucket: string;
}

export interface ReconcileInput {
  /** only captures reported in the last n days; absent: every pending capture */
  sinceDays?: number;
}

export type { ReconcileResult };

const logger = {
  info: (msg: string, meta?: Record<string, unknown>) => log.info(msg, meta),
  warn: (msg: string, meta?: Record<string, unknown>) => log.warn(msg, meta),
};

export function createReconcileActivities(deps: ReconcileActivityDeps) {
  return {
    /**
     * Registers the reported captures that are not in the ledger yet, from exactly the recorded
     * manifest keys. Idempotent: a retry registers only what is still missing.
     */
    async reconcileCaptures(input: ReconcileInput = {}): Promise<ReconcileResult> {
      return reconcile(
        { db: deps.db, s3: deps.s3, bucket: deps.bucket, log: logger },
        { ...(input.sinceDays !== undefined ? { sinceDays: input.sinceDays } : {}), onBatch: (soFar) => heartbeat(soFar) },
      );
    },
  };
}
