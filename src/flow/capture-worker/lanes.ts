// What a capture worker keeps so a capture handed over behind another (slot lead, see
// src/flow/workflows/slice.ts) starts the moment the one ahead ends its host's part, with no round
// trip through the slice: a gate per capture in hand, and the visits at once bounded by the
// worker's slots. Captures handed over behind others arrive on the worker's own queue, beyond the
// shared queue's slots; so the shared queue is polled only while fewer than `slots` captures in
// hand are in their host's part (sharedQueueSlots), and a worker whose slots its own chains of
// captures fill takes no new ones that another worker could.
import type { ActivitySlotInfo, CustomSlotSupplier, SlotPermit } from '@temporalio/worker';

/** A capture of a slice: the slice workflow's id, the page's index in it, the attempt. */
export interface CaptureKey {
  workflowId: string;
  index: number;
  attempt: number;
}

const keyOf = (k: CaptureKey): string => `${k.workflowId}\u0000${k.index}\u0000${k.attempt}`;

export class CaptureLanes {
  private readonly gates = new Map<string, { done: Promise<void>; open: () => void }>();
  private visiting = 0;
  private readonly queued: (() => void)[] = [];
  private readonly slots: number;
  /** captures in hand waiting behind another: not in their host's part yet */
  private behind = 0;
  /** shared-queue permits: reserved for a poll and not used yet, and in use (till the activity ends) */
  private reserved = 0;
  private inUse = 0;
  /** shared-queue tasks taken whose activity has not begun yet: busy already */
  private starting = 0;
  private readonly pollers: (() => void)[] = [];

  constructor(slots: number) {
    if (!Number.isInteger(slots) || slots < 1) throw new RangeError(`slots must be an integer ≥ 1, got ${slots}`);
    this.slots = slots;
  }

  /** A capture is in hand (taken from the shared queue, or from this worker's own): whatever
   * goes behind it waits until its host's part is over. */
  begin(k: CaptureKey, fromSharedQueue = false): void {
    if (fromSharedQueue && this.starting > 0) this.starting -= 1;
    let open = (): void => {};
    const done = new Promise<void>((r) => (open = r));
    this.gates.set(keyOf(k), { done, open });
  }

  /** Its host's part is over (or it ended without one): what waits behind it may start. */
  end(k: CaptureKey): void {
    const key = keyOf(k);
    const gate = this.gates.get(key);
    if (gate === undefined) return;
    gate.open();
    this.gates.delete(key);
    this.wakePollers();
  }

  /** Settles when the capture ahead ended its host's part; at once when this worker does not hold
   * it (it ended already, or another worker holds it and the slice will not be told otherwise). */
  async after(k: CaptureKey): Promise<void> {
    const gate = this.gates.get(keyOf(k));
    if (gate === undefined) return;
    this.behind += 1;
    try {
      await gate.done;
    } finally {
      this.behind -= 1;
    }
  }

  /** captures in hand in (or before) their host's part, not counting those waiting behind another */
  get busy(): number {
    return this.gates.size - this.behind + this.starting;
  }

  /** The shared capture queue's slots: a poll only while a new capture would not make more than
   * `slots` busy, and no more than twice the slots in hand with those packaging. */
  sharedQueueSlots(): CustomSlotSupplier<ActivitySlotInfo> {
    const free = (): boolean => this.busy + this.reserved < this.slots && this.inUse + this.reserved < 2 * this.slots;
    const reserve = (): SlotPermit => {
      this.reserved += 1;
      return { used: false };
    };
    return {
      type: 'custom',
      reserveSlot: (_ctx, abort) =>
        new Promise<SlotPermit>((resolve, reject) => {
          const tryNow = (): boolean => {
            if (abort.aborted || !free()) return false;
            resolve(reserve());
            return true;
          };
          if (tryNow()) return;
          const poller = (): void => {
            if (tryNow()) this.pollers.splice(this.pollers.indexOf(poller), 1);
          };
          this.pollers.push(poller);
          abort.addEventListener('abort', () => {
            const i = this.pollers.indexOf(poller);
            if (i >= 0) this.pollers.splice(i, 1);
            // the signal's own reason: Temporal takes it as a shutdown, anything else as a fault
            reject(abort.reason);
          });
        }),
      tryReserveSlot: () => (free() ? reserve() : null),
      markSlotUsed: ({ permit }) => {
        (permit as { used: boolean }).used = true;
        this.reserved -= 1;
        this.inUse += 1;
        this.starting += 1;
      },
      releaseSlot: ({ permit }) => {
        if ((permit as { used: boolean }).used) this.inUse -= 1;
        else this.reserved -= 1;
        this.wakePollers();
      },
    };
  }

  private wakePollers(): void {
    for (const poller of [...this.pollers]) poller();
  }

  /** A visit may start: at most `slots` at once; release() when its host's part is over. */
  async acquire(): Promise<void> {
    if (this.visiting < this.slots) {
      this.visiting += 1;
      return;
    }
    await new Promise<void>((r) => this.queued.push(r));
  }

  release(): void {
    const next = this.queued.shift();
    if (next !== undefined) next();
    else this.visiting = Math.max(0, this.visiting - 1);
  }

  /** captures in hand whose host's part is not over */
  get open(): number {
    return this.gates.size;
  }
}
