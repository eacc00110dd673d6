import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { copyField, copyText, type CopyField } from './copy-text.ts';

/** How Postgres reads one field of COPY's text format back (the escapes copyField writes, and \N). */
function readField(field: string): string | null {
  if (field === '\\N') return null;
  const unescape: Record<string, string> = { '\\': '\\', n: '\n', r: '\r', t: '\t' };
  return field.replace(/\\(.)/g, (_, c: string) => unescape[c] ?? c);
}

/** Lines and fields, split where COPY splits them: at a raw newline and a raw tab. */
const readText = (text: string): (string | null)[][] =>
  text
    .split('\n')
    .slice(0, -1)
    .map((line) => line.split('\t').map(readField));

describe('copyField', () => {
  it('writes NULL as \\N and text that looks like it escaped', () => {
    expect(copyField(null)).toBe('\\N');
    expect(copyField('\\N')).toBe('\\\\N');
  });

  it('escapes backslash, newline, carriage return and tab, and nothing else', () => {
    expect(copyField('a\\b\nc\rd\te')).toBe('a\\\\b\\nc\\rd\\te');
    expect(copyField('ünï "quoted" 🎉 , ; |')).toBe('ünï "quoted" 🎉 , ; |');
    expect(copyField('')).toBe('');
  });

  it('writes numbers as decimal text and refuses what is not finite', () => {
    expect(copyField(0)).toBe('0');
    expect(copyField(-12.5)).toBe('-12.5');
    expect(copyField(9007199254740991)).toBe('9007199254740991');
    expect(() => copyField(Number.NaN)).toThrow(/NaN is not a finite number/);
    expect(() => copyField(Number.POSITIVE_INFINITY)).toThrow(/Infinity is not a finite number/);
  });
});

describe('copyText', () => {
  it('writes a line a row, fields separated by tabs, each line ended', () => {
    expect(
      copyText([
        ['a', 1, null],
        ['b\tc', 2, 'x\ny'],
      ]),
    ).toBe('a\t1\t\\N\nb\\tc\t2\tx\\ny\n');
    expect(copyText([])).toBe('');
  });

  const field: fc.Arbitrary<CopyField> = fc.oneof(
    fc.constant(null),
    fc.string({ unit: 'grapheme' }),
    fc.string({ unit: fc.constantFrom('\\', '\n', '\r', '\t', 'N', 'a', ' ') }),
    fc.double({ noNaN: true, noDefaultInfinity: true }),
  );
  const rows = fc.array(fc.array(field, { minLength: 1, maxLength: 6 }), { maxLength: 8 });

  it('reads back as written: every row, every field, NULL apart from the text \\N', () => {
    fc.assert(
      fc.property(rows, (written) => {
        const expected = written.map((row) => row.map((v) => (typeof v === 'number' ? String(v) : v)));
        expect(readText(copyText(written))).toEqual(expected);
      }),
    );
  });

  it('leaves no raw newline or tab inside a field: a row is exactly one line of its fields', () => {
    fc.assert(
      fc.property(rows, (written) => {
        const lines = copyText(written).split('\n');
        expect(lines).toHaveLength(written.length + 1);
        lines.slice(0, -1).forEach((line, i) => expect(line.split('\t')).toHaveLength(written[i]!.length));
        expect(copyText(written)).not.toMatch(/\r/);
      }),
    );
  });
});
