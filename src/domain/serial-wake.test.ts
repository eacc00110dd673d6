import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { serialWake } from './serial-wake.ts';

const turns = async (n: number) => {
  for (let i = 0; i < n; i++) await Promise.resolve();
};

describe('serialWake', () => {
  it('never two runs at once, and every wake is followed by a run that started after it', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.nat(6), { maxLength: 30 }), fc.nat(6), async (gaps, runTurns) => {
        let inFlight = 0;
        let most = 0;
        const starts: number[] = [];
        let clock = 0;
        const w = serialWake(async () => {
          starts.push(clock);
          inFlight++;
          most = Math.max(most, inFlight);
          await turns(runTurns);
          inFlight--;
        });
        const wakes: number[] = [];
        for (const gap of gaps) {
          await turns(gap);
          clock++;
          wakes.push(clock);
          w.wake();
        }
        await w.idle();
        expect(most).toBeLessThanOrEqual(1);
        for (const at of wakes) expect(starts.some((s) => s >= at)).toBe(true);
        // wakes during one run fold into one more run: never more runs than wakes
        expect(starts.length).toBeLessThanOrEqual(wakes.length);
      }),
    );
  });

  it('a failing run does not stop later wakes', async () => {
    let runs = 0;
    const w = serialWake(async () => {
      runs++;
      throw new Error('boom');
    });
    w.wake();
    await w.idle();
    w.wake();
    await w.idle();
    expect(runs).toBe(2);
  });

  it('after stop, wakes start nothing', async () => {
    let runs = 0;
    const w = serialWake(async () => {
      runs++;
    });
    await w.stop();
    w.wake();
    await w.idle();
    expect(runs).toBe(0);
  });
});
