// Temporal schedules, created idempotently when the worker starts. `temporal schedule trigger
// --schedule-id outbox-drain` runs one by hand.
import { ScheduleAlreadyRunning, ScheduleOverlapPolicy, type Client, type ScheduleOptions } from '@temporalio/client';
import { INDEX_PENDING_WORKFLOW, OUTBOX_DRAIN_WORKFLOW, RECONCILE_WORKFLOW, SCHEDULES } from '../../temporal.config.ts';

export function outboxDrainSchedule(taskQueue: string): ScheduleOptions {
  return {
    scheduleId: SCHEDULES.outboxDrain.id,
    spec: { intervals: [{ every: SCHEDULES.outboxDrain.every }] },
    action: { type: 'startWorkflow', workflowType: OUTBOX_DRAIN_WORKFLOW, workflowId: SCHEDULES.outboxDrain.id, taskQueue, args: [] },
    policies: { overlap: ScheduleOverlapPolicy.SKIP, catchupWindow: '1 minute' },
  };
}

/** indexPending every SCHEDULES.searchIndex.every: archives with indexed_at NULL get indexed. Only when search is configured. */
export function searchIndexSchedule(taskQueue: string): ScheduleOptions {
  return {
    scheduleId: SCHEDULES.searchIndex.id,
    spec: { intervals: [{ every: SCHEDULES.searchIndex.every }] },
    action: { type: 'startWorkflow', workflowType: INDEX_PENDING_WORKFLOW, workflowId: SCHEDULES.searchIndex.id, taskQueue, args: [] },
    policies: { overlap: ScheduleOverlapPolicy.SKIP, catchupWindow: '10 minutes' },
  };
}

/** The daily reconcile looks back this far (capture_submissions.reported_at). */
export const RECONCILE_SINCE_DAYS = 30;

/** reconcile once a day (cron SCHEDULES.reconcile.cron, UTC), over the last RECONCILE_SINCE_DAYS days. */
export function reconcileSchedule(taskQueue: string): ScheduleOptions {
  return {
    scheduleId: SCHEDULES.reconcile.id,
    spec: { cronExpressions: [SCHEDULES.reconcile.cron] },
    action: {
      type: 'startWorkflow',
      workflowType: RECONCILE_WORKFLOW,
      workflowId: SCHEDULES.reconcile.id,
      taskQueue,
      args: [{ sinceDays: RECONCILE_SINCE_DAYS }],
    },
    policies: { overlap: ScheduleOverlapPolicy.SKIP, catchupWindow: '1 hour' },
  };
}

/**
 * Creates each schedule unless it exists; an existing one is updated to the options given (so a
 * changed task queue or interval takes effect on the next worker start). Returns what happened.
 */
export async function ensureSchedules(client: Client, schedules: ScheduleOptions[]): Promise<{ id: string; action: 'created' | 'updated' }[]> {
  const out: { id: string; action: 'created' | 'updated' }[] = [];
  for (const s of schedules) {
    try {
      await client.schedule.create(s);
      out.push({ id: s.scheduleId, action: 'created' });
    } catch (err) {
      if (!(err instanceof ScheduleAlreadyRunning)) throw err;
      await client.schedule
        .getHandle(s.scheduleId)
        .update((prev) => ({ ...prev, spec: s.spec, action: s.action as never, policies: { ...prev.policies, ...s.policies } }));
      out.push({ id: s.scheduleId, action: 'updated' });
    }
  }
  return out;
}
