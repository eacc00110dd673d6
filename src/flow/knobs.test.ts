import { describe, expect, it } from 'vitest';
import { extraDelayMs, KnobError, matches, mergeKnobs, parseKnobs } from './knobs.ts';

describe('knobs', () => {
  it('parses a query string’s values (strings, repeated keys as arrays)', () => {
    expect(
      parseKnobs({
        captureDelayMs: '200',
        fail: ['/a', '/b'],
        deadlineMs: '1000',
        slow: '/slow:5000',
        reportFailed: '/lie',
        manifestError: '/lost',
        dropReportDepth: '2',
      }),
    ).toEqual({
      captureDelayMs: 200,
      fail: ['/a', '/b'],
      deadlineMs: 1000,
      slow: [{ pattern: '/slow', ms: 5000 }],
      reportFailed: ['/lie'],
      manifestError: ['/lost'],
      dropReportDepths: [2],
    });
  });
  it('parses JSON values', () => {
    expect(parseKnobs({ slow: [{ pattern: 'http://x:1/a', ms: 5 }], dropReportDepths: [0, 1] })).toEqual({
      slow: [{ pattern: 'http://x:1/a', ms: 5 }],
      dropReportDepths: [0, 1],
    });
    expect(parseKnobs({ slow: 'http://127.0.0.2:80/x:10' })).toEqual({ slow: [{ pattern: 'http://127.0.0.2:80/x', ms: 10 }] });
  });
  it('refuses unknown knobs and bad values, naming them', () => {
    expect(() => parseKnobs({ captureDelay: '1' })).toThrow(KnobError);
    expect(() => parseKnobs({ captureDelay: '1' })).toThrow(/unknown knob "captureDelay"/);
    expect(() => parseKnobs({ captureDelayMs: '-1' })).toThrow(/captureDelayMs/);
    expect(() => parseKnobs({ deadlineMs: '0' })).toThrow(/deadlineMs/);
    expect(() => parseKnobs({ slow: 'nocolon' })).toThrow(/slow/);
    expect(() => parseKnobs({ fail: [1] })).toThrow(/fail/);
  });
  it('matches URL patterns as substrings; an empty pattern matches nothing', () => {
    expect(matches(['/a'], 'http://h/a/b')).toBe(true);
    expect(matches(['/c'], 'http://h/a/b')).toBe(false);
    expect(matches([''], 'http://h/')).toBe(false);
    expect(matches(undefined, 'http://h/')).toBe(false);
  });
  it('adds the capture delay and every matching slow rule', () => {
    expect(
      extraDelayMs(
        {
          captureDelayMs: 10,
          slow: [
            { pattern: '/s', ms: 100 },
            { pattern: '/slow', ms: 5 },
          ],
        },
        'http://h/slow',
      ),
    ).toBe(115);
    expect(extraDelayMs({}, 'http://h/')).toBe(0);
  });
  it('lets per-dispatch knobs win key by key', () => {
    expect(mergeKnobs({ captureDelayMs: 1, fail: ['/a'] }, { fail: ['/b'] })).toEqual({ captureDelayMs: 1, fail: ['/b'] });
  });
});
