import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { groupFailures, overtakingUnits, planBatch, tupleKeyOf, type QueuedTuple } from './outbox-plan.ts';

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
