import { describe, expect, it } from 'vitest';
import { outboxDrainSchedule, reconcileSchedule, searchIndexSchedule } from '../../src/temporal/schedules.ts';

describe('schedules the worker creates', () => {
  it('search-index runs the indexPending workflow every 10 minutes, skipping overlaps', () => {
    const s = searchIndexSchedule('q1');
    expect(s.scheduleId).toBe('search-index');
    expect(s.spec.intervals).toEqual([{ every: '10m' }]);
    expect(s.action).toMatchObject({ type: 'startWorkflow', workflowType: 'indexPending', workflowId: 'search-index', taskQueue: 'q1', args: [] });
    expect(s.policies?.overlap).toBe(outboxDrainSchedule('q1').policies?.overlap);
  });

  it('every schedule has its own id and workflow', () => {
    const all = [outboxDrainSchedule('q'), reconcileSchedule('q'), searchIndexSchedule('q')];
    expect(new Set(all.map((s) => s.scheduleId)).size).toBe(3);
    expect(new Set(all.map((s) => (s.action as { workflowType: string }).workflowType))).toEqual(new Set(['outboxDrain', 'reconcile', 'indexPending']));
  });
});
