import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { CAPTURE_SUFFIX, captureListPrefix, captureObjectKey, isCaptureObject } from './capture-objects.ts';

const PREFIX = 'captures/c1/0/';
const suffixes = Object.values(CAPTURE_SUFFIX);
const taskId = fc.stringMatching(/^[A-Za-z0-9_-][A-Za-z0-9._-]{0,30}$/).filter((s) => s !== '.' && s !== '..');
const suffix = fc.constantFrom(...suffixes);

describe('a capture’s own objects', () => {
  it('are listed under `<prefix><taskId>.`, taken from its manifest key', () => {
    expect(captureListPrefix(`${PREFIX}t1.result.json`, 't1')).toBe(`${PREFIX}t1.`);
    expect(captureObjectKey(`${PREFIX}t1`, CAPTURE_SUFFIX.links)).toBe(`${PREFIX}t1.links.json`);
  });

  it('a manifest key that is not `<prefix><taskId>.result.json` lists nothing', () => {
    expect(captureListPrefix(`${PREFIX}t2.result.json`, 't1')).toBeNull();
    expect(captureListPrefix(`${PREFIX}t1.wacz`, 't1')).toBeNull();
    expect(captureListPrefix('t1.result.json', 't1')).toBeNull();
    expect(captureListPrefix(`${PREFIX}../t1.result.json`, '..')).toBeNull();
  });

  it('are the suffixes the flow writes, and nothing else listed under the prefix', () => {
    const list = `${PREFIX}t1.`;
    for (const s of suffixes) expect(isCaptureObject(`${PREFIX}t1.${s}`, list)).toBe(true);
    // another task whose id extends this one's after a dot, and keys no capture writes
    for (const other of ['t1.x.wacz', 't1.links.wacz', 't1.result.result.json', 't1.json', 't1.', 't1.wacz.bak', 't10.wacz'])
      expect(isCaptureObject(`${PREFIX}${other}`, list)).toBe(false);
    expect(isCaptureObject(`other/t1.wacz`, list)).toBe(false);
  });

  it('property: a key of one task is never another task’s object, and always its own', () => {
    fc.assert(
      fc.property(taskId, taskId, suffix, (a, b, s) => {
        const listA = captureListPrefix(`${PREFIX}${a}.result.json`, a)!;
        const keyB = captureObjectKey(`${PREFIX}${b}`, s);
        expect(isCaptureObject(keyB, listA)).toBe(a === b);
      }),
      { numRuns: 2000 },
    );
  });

  it('property: a task whose id extends another’s after a dot shares no key with it', () => {
    fc.assert(
      fc.property(taskId, fc.stringMatching(/^[A-Za-z0-9_-]{1,12}$/), suffix, suffix, (a, tail, sa, sb) => {
        const b = `${a}.${tail}`;
        expect(captureObjectKey(`${PREFIX}${b}`, sb)).not.toBe(captureObjectKey(`${PREFIX}${a}`, sa));
        expect(isCaptureObject(captureObjectKey(`${PREFIX}${b}`, sb), captureListPrefix(`${PREFIX}${a}.result.json`, a)!)).toBe(false);
      }),
      { numRuns: 2000 },
    );
  });
});
