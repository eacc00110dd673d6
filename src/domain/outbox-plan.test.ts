import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { claimBatch, groupFailures, overtakingUnits, planBatch, tupleKeyOf, type LanePlace, type QueuedTuple } from './outbox-plan.ts';

// a few tuples and variants, so rows of one tuple meet often
const rowArb = fc.record({
  operation: fc.constantFrom<'write' | 'delete'>('write', 'delete'),
  tuple_user: fc.constantFrom('user:a', 'user:b'),
  relation: fc.constantFrom('owner', 'parent'),
  object: fc.constantFrom('archive:1', 'archive:2'),
  condition: fc.constantFrom(null, { name: 'until', context: { t: 1 } }),
});
const rowsArb = fc.array(rowArb, { maxLength: 30 }).map((rows) => rows.map((r, i) => ({ ...r, id: i + 1 })));
const variant = (r: QueuedTuple) => `${r.operation} ${JSON.stringify(r.condition)}`;

describe('planBatch', () => {
  it('takes a prefix of the rows, in order, cut before the first second variant of a tuple', () => {
    fc.assert(
      fc.property(rowsArb, (rows) => {
        const { units, taken } = planBatch(rows);
        expect(taken).toEqual(rows.slice(0, taken.length));
        const next = rows[taken.length];
        if (next !== undefined) {
          const same = taken.find((t) => tupleKeyOf(t) === tupleKeyOf(next));
          expect(same && variant(same) !== variant(next)).toBe(true);
        }
        // every taken row is in exactly one unit, each unit one tuple in one variant, units in first-row order
        expect(units.flatMap((u) => u.rows).sort((a, b) => a.id - b.id)).toEqual(taken);
        for (const u of units) expect(new Set(u.rows.map((r) => `${tupleKeyOf(r)} ${variant(r)}`)).size).toBe(1);
        expect(new Set(units.map((u) => tupleKeyOf(u.rows[0]!))).size).toBe(units.length);
        expect(units.map((u) => u.rows[0]!.id)).toEqual([...units.map((u) => u.rows[0]!.id)].sort((a, b) => a - b));
      }),
    );
  });

  it('an identical row enqueued twice travels as one unit; a delete after a write waits', () => {
    const w = { operation: 'write' as const, tuple_user: 'user:a', relation: 'owner', object: 'archive:1', condition: null };
    const { units, taken } = planBatch([
      { ...w, id: 1 },
      { ...w, id: 2 },
      { ...w, id: 3, operation: 'delete' as const },
    ]);
    expect(units.map((u) => u.rows.map((r) => r.id))).toEqual([[1, 2]]);
    expect(taken.map((r) => r.id)).toEqual([1, 2]);
  });
});

describe('overtakingUnits', () => {
  it('holds a unit exactly when a live row of its tuple before its last row is outside it', () => {
    fc.assert(
      fc.property(rowsArb, fc.array(fc.boolean(), { minLength: 30, maxLength: 30 }), (queue, inBatch) => {
        // the batch is some of the queue's rows (others held by other lanes, or failed); counts come from the whole queue
        const batch = queue
          .filter((_, i) => inBatch[i])
          .map((r) => ({ ...r, earlier: queue.filter((e) => tupleKeyOf(e) === tupleKeyOf(r) && e.id < r.id).length }));
        const { units } = planBatch(batch);
        const held = overtakingUnits(units);
        for (const u of units) {
          const last = u.rows[u.rows.length - 1]!.id;
          const ids = new Set(u.rows.map((r) => r.id));
          const outside = queue.some((e) => tupleKeyOf(e) === tupleKeyOf(u.rows[0]!) && e.id < last && !ids.has(e.id));
          expect(held.has(u)).toBe(outside);
        }
      }),
    );
  });
});

describe('groupFailures', () => {
  it('one group per error text and kind, every failure in exactly one, order kept', () => {
    fc.assert(
      fc.property(fc.array(fc.record({ error: fc.constantFrom('a', 'b'), refused: fc.boolean(), n: fc.nat() })), (failed) => {
        const groups = groupFailures(failed);
        expect(groups.flat().length).toBe(failed.length);
        for (const g of groups) expect(new Set(g.map((f) => `${f.refused}${f.error}`)).size).toBe(1);
        expect(new Set(groups.map((g) => `${g[0]!.refused}${g[0]!.error}`)).size).toBe(groups.length);
        for (const g of groups) expect(g).toEqual(failed.filter((f) => f.refused === g[0]!.refused && f.error === g[0]!.error));
      }),
    );
  });
});

describe('claimBatch', () => {
  it("starts at the frontier and claims the ids after it; after a cut, at the lane's own cursor, claiming nothing", () => {
    expect(claimBatch({ cursor: 0, cut: false }, 0, 100)).toEqual({ from: 0, frontier: 100 });
    expect(claimBatch({ cursor: 140, cut: false }, 400, 100)).toEqual({ from: 400, frontier: 500 });
    expect(claimBatch({ cursor: 140, cut: true }, 400, 100)).toEqual({ from: 140, frontier: 400 });
  });

  /** A lane of the model: its place, and its batches locked but not committed (oldest first). */
  type ModelLane = LanePlace & { pending: { released: number[] }[]; done: boolean };

  /**
   * Lanes of one pass over a queue of `ids`, as drainBatch runs them: a batch claims, locks the
   * first `want` free rows after its start, takes a prefix (a cut leaves the rest locked until it
   * commits), and the lane locks its next batch before that one commits unless it was cut.
   * `steps` says which lane moves next and how many of its rows a batch takes (all: -1).
   */
  function drainModel(ids: number[], want: number, lanes: number, steps: { lane: number; take: number }[]): number[] {
    const free = new Set(ids);
    const taken: number[] = [];
    const model: ModelLane[] = Array.from({ length: lanes }, () => ({ cursor: 0, cut: false, pending: [], done: false }));
    let frontier = 0;
    const lock = (lane: ModelLane, take: number): void => {
      const claim = claimBatch(lane, frontier, want);
      frontier = claim.frontier;
      const rows = [...free]
        .filter((id) => id > claim.from)
        .sort((a, b) => a - b)
        .slice(0, want);
      if (rows.length === 0) {
        lane.done = true;
        return;
      }
      frontier = Math.max(frontier, rows[rows.length - 1]!);
      for (const id of rows) free.delete(id);
      const k = take < 0 ? rows.length : 1 + (take % rows.length);
      taken.push(...rows.slice(0, k));
      lane.cursor = rows[k - 1]!;
      lane.cut = k < rows.length;
      lane.pending.push({ released: rows.slice(k) });
    };
    const commit = (lane: ModelLane): void => {
      for (const id of lane.pending.shift()!.released) free.add(id);
    };
    for (let i = 0; model.some((l) => !l.done || l.pending.length > 0); i++) {
      // once the steps run out, the lanes go round in turn
      const { lane: which, take } = steps[i] ?? { lane: i, take: -1 };
      const lane = model[which % lanes]!;
      // a cut batch commits before its lane locks again, and a lane holds at most two batches
      const mustCommit = lane.done || lane.cut || lane.pending.length === 2;
      if (lane.pending.length > 0 && (mustCommit || take % 2 !== 0)) commit(lane);
      else if (!lane.done) lock(lane, take);
    }
    return taken;
  }

  it('passes over no row and takes none twice, however the lanes interleave, cut, and the ids leave gaps', () => {
    fc.assert(
      fc.property(
        // ids as a sequence hands them out: mostly one after another, now and then a gap
        fc.array(fc.oneof({ weight: 4, arbitrary: fc.constant(1) }, { weight: 1, arbitrary: fc.integer({ min: 2, max: 12 }) }), { maxLength: 120 }),
        fc.integer({ min: 1, max: 8 }),
        fc.integer({ min: 1, max: 5 }),
        fc.array(fc.record({ lane: fc.nat(4), take: fc.oneof({ weight: 3, arbitrary: fc.constant(-1) }, { weight: 1, arbitrary: fc.nat(9) }) }), {
          maxLength: 200,
        }),
        (gaps, want, lanes, steps) => {
          let id = 0;
          const ids = gaps.map((gap) => (id += gap));
          const taken = drainModel(ids, want, lanes, steps);
          expect([...taken].sort((a, b) => a - b)).toEqual([...ids].sort((a, b) => a - b));
        },
      ),
    );
  });
});
