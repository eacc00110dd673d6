import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { nulPath, nulPathInJson } from './nul.ts';

describe('nulPath', () => {
  it('finds U+0000 in a string or a key, nested, and names where', () => {
    expect(nulPath('a\u0000')).toEqual([]);
    expect(nulPath({ pages: [{ url: 'u' }, { url: 'v', manifestError: 'x\u0000y' }] })).toEqual(['pages', 1, 'manifestError']);
    expect(nulPath({ rules: [{ 'fol\u0000low': 'any' }] })).toEqual(['rules', 0, 'fol\u0000low']);
    // the first in document order: a key is met before its value, and before later entries
    expect(nulPath({ a: { x: '\u0000' }, ['b\u0000']: 1 })).toEqual(['a', 'x']);
    expect(nulPath({ ['a\u0000']: { x: '\u0000' } })).toEqual(['a\u0000']);
    // nesting as deep as a body allows, without recursion
    let deep: unknown = 'end\u0000';
    for (let i = 0; i < 100_000; i++) deep = [deep];
    expect(nulPath(deep)).toHaveLength(100_000);
    // text that only looks like an escape is not a NUL
    expect(nulPath({ a: '\\u0000', b: [1, null, true, { c: 'd' }] })).toBeUndefined();
  });

  it('property: a NUL anywhere in a JSON value is found, exactly at its path; none, none found', () => {
    const noNul = fc.string().filter((s) => !s.includes('\u0000'));
    const json = fc.letrec((tie) => ({
      value: fc.oneof(
        { depthSize: 'small' },
        noNul,
        fc.integer(),
        fc.boolean(),
        fc.constant(null),
        fc.array(tie('value'), { maxLength: 4 }),
        fc.dictionary(noNul, tie('value'), { maxKeys: 4 }),
      ),
    })).value;
    fc.assert(
      fc.property(json, (v) => {
        expect(nulPath(v)).toBeUndefined();
        // a NUL at the leaf reached by following first elements and first keys, inside a wrapper
        const doc: Record<string, unknown> = { root: v };
        const path: (string | number)[] = ['root'];
        let holder: Record<string | number, unknown> = doc;
        let key: string | number = 'root';
        for (;;) {
          const cur: unknown = holder[key];
          const next: string | number | undefined = Array.isArray(cur)
            ? cur.length > 0
              ? 0
              : undefined
            : typeof cur === 'object' && cur !== null
              ? Object.keys(cur)[0]
              : undefined;
          if (next === undefined) break;
          holder = cur as Record<string | number, unknown>;
          key = next;
          path.push(key);
        }
        holder[key] = 'bad\u0000';
        expect(nulPath(doc)).toEqual(path);
        // the text JSON makes of it always carries the escape the walk is skipped without
        expect(nulPathInJson(JSON.stringify(doc), doc)).toEqual(path);
      }),
    );
  });
});
