import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { QA_MIN_PIXELS, QA_MIN_TEXT, qaVerdict, shouldRecapture, textSimilarity, type QaAttempt } from './qa.ts';

const text = fc.array(fc.constantFrom('a', 'b', 'c', 'feed', 'item', '東京', 'x'), { maxLength: 30 }).map((ws) => ws.join(' '));

describe('textSimilarity', () => {
  it('is 1 for the same words in any spacing or case, symmetric, and within [0, 1]', () => {
    fc.assert(
      fc.property(text, text, (a, b) => {
        expect(textSimilarity(a, a.toUpperCase().replace(/ /g, '\n  '))).toBe(1);
        expect(textSimilarity(a, b)).toBe(textSimilarity(b, a));
        expect(textSimilarity(a, b)).toBeGreaterThanOrEqual(0);
        expect(textSimilarity(a, b)).toBeLessThanOrEqual(1);
      }),
    );
  });
  it('counts repeats, and text missing from one side lowers it', () => {
    expect(textSimilarity('a a b', 'a b')).toBeCloseTo(0.8);
    expect(textSimilarity('feed item one feed item two', 'feed item one')).toBeCloseTo(6 / 9);
    expect(textSimilarity('', '')).toBe(1);
    expect(textSimilarity('a', '')).toBe(0);
  });
});

describe('qaVerdict', () => {
  it('is good only with pixels and text at their thresholds and no request missed', () => {
    expect(qaVerdict({ pixels: QA_MIN_PIXELS, text: QA_MIN_TEXT, misses: 0, missed: [] })).toBe('good');
    expect(qaVerdict({ pixels: 1, text: 1, misses: 1, missed: ['http://a.test/x'] })).toBe('review');
    expect(qaVerdict({ pixels: QA_MIN_PIXELS - 0.001, text: 1, misses: 0, missed: [] })).toBe('review');
    expect(qaVerdict({ pixels: 1, text: QA_MIN_TEXT - 0.001, misses: 0, missed: [] })).toBe('review');
  });
  it('one more attempt only after a first that needs review', () => {
    const a = (verdict: QaAttempt['verdict'], attempt = 1): QaAttempt => ({ attempt, verdict, pixels: 1, text: 1, misses: 0, missed: [] });
    expect(shouldRecapture([a('review')])).toBe(true);
    expect(shouldRecapture([a('good')])).toBe(false);
    expect(shouldRecapture([a('review'), a('review', 2)])).toBe(false);
    expect(shouldRecapture([])).toBe(false);
  });
});
