import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { hostDelayMs, hostReadyAt, MIN_VISIT_DEADLINE_MS, visitDeadlineMs } from './capture-window.ts';

describe('hostDelayMs', () => {
  it('is the slice’s delay unless a Crawl-delay asks for more', () => {
    expect(hostDelayMs(2000, undefined)).toBe(2000);
    expect(hostDelayMs(2000, 500)).toBe(2000);
    expect(hostDelayMs(2000, 5000)).toBe(5000);
    expect(hostDelayMs(0, 0)).toBe(0);
  });

  it('is never shorter than either', () => {
    fc.assert(
      fc.property(fc.nat(1_000_000), fc.option(fc.nat(1_000_000), { nil: undefined }), (slice, crawl) => {
        const d = hostDelayMs(slice, crawl);
        expect(d).toBeGreaterThanOrEqual(slice);
        expect(d).toBeGreaterThanOrEqual(crawl ?? 0);
        expect([slice, crawl]).toContain(d);
      }),
    );
  });
});

describe('hostReadyAt', () => {
  it('is at once for a host nothing finished on, else the last finish plus the delay', () => {
    expect(hostReadyAt(undefined, 5000)).toBe(0);
    expect(hostReadyAt(10_000, 5000)).toBe(15_000);
    expect(hostReadyAt(10_000, 0)).toBe(10_000);
  });
});

describe('visitDeadlineMs', () => {
  it('is the deadline asked for while the window has room, else what is left of it, never under the minimum', () => {
    expect(visitDeadlineMs(120_000, 1_000_000, 0)).toBe(120_000);
    expect(visitDeadlineMs(120_000, 50_000.7, 0)).toBe(50_000);
    expect(visitDeadlineMs(120_000, 10, 0)).toBe(MIN_VISIT_DEADLINE_MS);
    expect(visitDeadlineMs(120_000, 0, 5000)).toBe(MIN_VISIT_DEADLINE_MS);
  });

  it('is a whole number of ms, at least the minimum, and over the minimum never longer than asked or than the window', () => {
    fc.assert(
      fc.property(fc.nat(1_000_000), fc.double({ min: -1e6, max: 1e7, noNaN: true }), fc.nat(1_000_000), (asked, finishBy, now) => {
        const d = visitDeadlineMs(asked, finishBy, now);
        expect(Number.isInteger(d)).toBe(true);
        expect(d).toBeGreaterThanOrEqual(MIN_VISIT_DEADLINE_MS);
        if (d > MIN_VISIT_DEADLINE_MS) {
          expect(d).toBeLessThanOrEqual(asked);
          expect(d).toBeLessThanOrEqual(finishBy - now);
        }
      }),
    );
  });
});
