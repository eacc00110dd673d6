import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { validDate } from './iso-date.ts';

/** validDate as it was, through Date.parse alone. */
function parsed(s: string): string | undefined {
  const t = Date.parse(s);
  const inRange = t >= Date.parse('0001-01-01T00:00:00.000Z') && t <= Date.parse('9999-12-31T23:59:59.999Z');
  return Number.isNaN(t) || !inRange ? undefined : new Date(t).toISOString();
}

describe('validDate', () => {
  const digits = (n: number) => fc.array(fc.constantFrom(...'0123456789'), { minLength: n, maxLength: n }).map((d) => d.join(''));
  // the canonical shape with any digits: days past the month's end, hour 24, second 60, year 0999…
  const shaped = fc
    .tuple(digits(4), fc.constantFrom('01', '02', '04', '12', '13', '00'), digits(2), digits(2), digits(2), digits(2), digits(3))
    .map(([y, mo, d, h, mi, s, ms]) => `${y}-${mo}-${d}T${h}:${mi}:${s}.${ms}Z`);
  const instant = fc.date({ min: new Date('-000100-01-01T00:00:00Z'), max: new Date('+010100-01-01T00:00:00Z'), noInvalidDate: true });

  it('property: the same answer as Date.parse and toISOString, for the canonical shape with any digits, any instant, any string', () => {
    const input = fc.oneof(
      shaped,
      instant.map((d) => d.toISOString()),
      fc.string({ maxLength: 30 }),
      fc.constantFrom('2024-02-29T12:00:00.000Z', '2023-02-29T12:00:00.000Z', '2100-02-29T00:00:00.000Z', '2000-02-29T00:00:00.000Z'),
    );
    fc.assert(
      fc.property(input, (s) => {
        expect(validDate(s)).toBe(parsed(s));
      }),
      { numRuns: 20_000 },
    );
  });

  it('normalises what Date.parse reads into toISOString form and refuses what it cannot', () => {
    const cases: [string | undefined, string | undefined][] = [
      ['2025-02-30T00:00:00.000Z', '2025-03-02T00:00:00.000Z'],
      ['2025-01-01T00:00:00Z', '2025-01-01T00:00:00.000Z'],
      ['0999-12-31T23:59:59.999Z', '0999-12-31T23:59:59.999Z'],
      ['+010000-01-01T00:00:00.000Z', undefined],
      ['not a date', undefined],
      [undefined, undefined],
    ];
    for (const [s, want] of cases) expect(validDate(s)).toBe(want);
  });
});
