// The admission bench's own-work line (bench/support-admission-own-work.ts): the room the goal
// leaves, and the reader that serves a level from memory.
import { describe, expect, it } from 'vitest';
import { goalRoomCpuMs, memoryReader, objectAt, readRef, textOf } from '../../bench/support-admission-own-work.ts';

describe("admission's own work beside the goal's room", () => {
  it("leaves what the cores give in the goal's time, less what the reads took alone", () => {
    // 0.4 s of reads on 2 cores: 1.15 × 0.4 s × 2 = 920 ms of CPU in all, 790 of it the reads'
    expect(goalRoomCpuMs(1.15, { seconds: 0.4, cpuMs: 790 }, 2)).toBe(130);
    expect(goalRoomCpuMs(1.15, { seconds: 0.4, cpuMs: 790 }, 1)).toBe(-330);
    // reads that kept every core busy leave exactly the goal's share of them
    expect(goalRoomCpuMs(1.15, { seconds: 1, cpuMs: 2000 }, 2)).toBe(300);
  });

  it('serves the objects it was given, by bucket and key, and counts every other read as missed', async () => {
    const reader = memoryReader(new Map([[objectAt('captures', 'a/t.result.json'), '{"x":1}']]));
    expect(await reader.read('captures', 'a/t.result.json')).toEqual({ kind: 'ok', text: '{"x":1}' });
    expect(await reader.read('captures', 'a/t.links.json')).toEqual({ kind: 'missing' });
    // the same key in another bucket is another object
    expect(await reader.read('elsewhere', 'a/t.result.json')).toEqual({ kind: 'missing' });
    expect(reader.missed()).toBe(2);
  });

  it('reads a seeded object at the version it was put, and refuses an object that is not there', async () => {
    const asked: unknown[][] = [];
    const reader = { read: async (...args: unknown[]) => (asked.push(args), { kind: 'ok' as const, text: 'x' }), close() {} };
    await readRef(reader, 'b', { key: 'bench/c/0/t.links.json', versionId: 'v1' });
    await readRef(reader, 'b', { key: 'bench/c/0/t.result.json' });
    expect(asked).toEqual([
      ['b', 'bench/c/0/t.links.json', undefined, 'v1'],
      ['b', 'bench/c/0/t.result.json', undefined, undefined],
    ]);
    expect(textOf({ kind: 'ok', text: 'x' })).toBe('x');
    expect(() => textOf({ kind: 'missing' })).toThrow(/not read: missing/);
  });
});
