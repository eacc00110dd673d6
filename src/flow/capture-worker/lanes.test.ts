import { describe, expect, it } from 'vitest';
import type { SlotPermit, SlotReserveContext } from '@temporalio/worker';
import { CaptureLanes, type CaptureKey } from './lanes.ts';

const key = (index: number, attempt = 1): CaptureKey => ({ workflowId: 'slice-1', index, attempt });
const settled = async (p: Promise<unknown>): Promise<boolean> => {
  let done = false;
  void p.then(() => (done = true));
  // two turns of the microtask queue: a promise already resolved has settled by then
  await Promise.resolve();
  await Promise.resolve();
  return done;
};

describe('CaptureLanes', () => {
  it('holds a capture behind one in hand until that one ends its host’s part', async () => {
    const lanes = new CaptureLanes(1);
    lanes.begin(key(0));
    const behind = lanes.after(key(0));
    expect(await settled(behind)).toBe(false);
    lanes.end(key(0));
    expect(await settled(behind)).toBe(true);
    expect(lanes.open).toBe(0);
  });
  it('lets through at once a capture behind one this worker does not hold, or behind another attempt', async () => {
    const lanes = new CaptureLanes(1);
    expect(await settled(lanes.after(key(3)))).toBe(true);
    lanes.begin(key(3, 1));
    expect(await settled(lanes.after(key(3, 2)))).toBe(true);
    expect(await settled(lanes.after({ workflowId: 'slice-2', index: 3, attempt: 1 }))).toBe(true);
  });
  it('ending twice is harmless (the host’s part, then the activity’s end)', async () => {
    const lanes = new CaptureLanes(1);
    lanes.begin(key(1));
    lanes.end(key(1));
    lanes.end(key(1));
    expect(lanes.open).toBe(0);
  });
  it('lets no more visits at once than its slots, in the order they asked', async () => {
    const lanes = new CaptureLanes(2);
    await lanes.acquire();
    await lanes.acquire();
    const third = lanes.acquire();
    const fourth = lanes.acquire();
    expect(await settled(third)).toBe(false);
    lanes.release();
    expect(await settled(third)).toBe(true);
    expect(await settled(fourth)).toBe(false);
    lanes.release();
    expect(await settled(fourth)).toBe(true);
    lanes.release();
    lanes.release();
    // all released: two more go through at once, a third waits
    await lanes.acquire();
    await lanes.acquire();
    expect(await settled(lanes.acquire())).toBe(false);
  });
  it('refuses slots that are not a whole number ≥ 1', () => {
    expect(() => new CaptureLanes(0)).toThrow(RangeError);
    expect(() => new CaptureLanes(1.5)).toThrow(RangeError);
  });

  describe('the shared queue’s slots', () => {
    const ctx = { slotType: 'activity', taskQueue: 'capture' } as SlotReserveContext;
    const info = { slotInfo: { type: 'activity' as const, activityType: 'capturePage' } };

    it('are given while captures in their host’s part are fewer than the slots, and again when one ends', async () => {
      const lanes = new CaptureLanes(2);
      const slots = lanes.sharedQueueSlots();
      const first = await slots.reserveSlot(ctx, new AbortController().signal);
      slots.markSlotUsed({ ...info, permit: first });
      lanes.begin(key(0), true);
      const second = await slots.reserveSlot(ctx, new AbortController().signal);
      slots.markSlotUsed({ ...info, permit: second });
      // taken, not yet begun: busy already
      expect(lanes.busy).toBe(2);
      expect(slots.tryReserveSlot(ctx)).toBeNull();
      lanes.begin(key(1), true);
      const third = slots.reserveSlot(ctx, new AbortController().signal);
      expect(await settled(third)).toBe(false);
      // the first capture's host part ends (it goes on packaging, its permit still in use)
      lanes.end(key(0));
      expect(await settled(third)).toBe(true);
    });
    it('do not count a capture waiting behind another on this worker', async () => {
      const lanes = new CaptureLanes(1);
      const slots = lanes.sharedQueueSlots();
      const permit = await slots.reserveSlot(ctx, new AbortController().signal);
      slots.markSlotUsed({ ...info, permit });
      lanes.begin(key(0), true);
      lanes.begin(key(1));
      const waiting = lanes.after(key(0));
      expect(lanes.busy).toBe(1);
      lanes.end(key(0));
      await waiting;
      // the one behind is in its host's part now: still one busy, no room for another
      expect(lanes.busy).toBe(1);
      expect(slots.tryReserveSlot(ctx)).toBeNull();
      lanes.end(key(1));
      expect(slots.tryReserveSlot(ctx)).not.toBeNull();
    });
    it('hold no more than twice the slots with captures still packaging', async () => {
      const lanes = new CaptureLanes(1);
      const slots = lanes.sharedQueueSlots();
      const permits: SlotPermit[] = [];
      for (const i of [0, 1]) {
        const p = await slots.reserveSlot(ctx, new AbortController().signal);
        slots.markSlotUsed({ ...info, permit: p });
        lanes.begin(key(i), true);
        lanes.end(key(i));
        permits.push(p);
      }
      expect(slots.tryReserveSlot(ctx)).toBeNull();
      slots.releaseSlot({ ...info, permit: permits[0]! });
      expect(slots.tryReserveSlot(ctx)).not.toBeNull();
    });
    it('an aborted reservation rejects and is forgotten; a permit never used is given back', async () => {
      const lanes = new CaptureLanes(1);
      const slots = lanes.sharedQueueSlots();
      const unused = await slots.reserveSlot(ctx, new AbortController().signal);
      const abort = new AbortController();
      const pending = slots.reserveSlot(ctx, abort.signal);
      const reason = new Error('worker shutting down');
      abort.abort(reason);
      // the signal's own reason, which Temporal takes as a shutdown rather than a fault
      await expect(pending).rejects.toBe(reason);
      slots.releaseSlot({ permit: unused });
      expect(slots.tryReserveSlot(ctx)).not.toBeNull();
    });
  });
});
