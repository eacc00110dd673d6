// RFC 9309 path matching in bounded time. A rule is a literal prefix and literal segments between
// `*`s, optionally anchored at the end by a final `$`; segments are placed greedily at their
// leftmost occurrence, which finds a match whenever one exists (moving a segment left never takes
// room from the ones after it), each found by Knuth–Morris–Pratt: one rule costs at most about
// twice the path length in steps. The usual matcher (robots-parser, Google's) costs pattern length
// × path length per rule: 1,239 rules such as `/*a*a…*b` against an 8,000-character path held the
// event loop for 14 s. Nor is String.prototype.indexOf linear (2,000 rules `/*aa…ab` took
// 200–400 ms with it). What is left, rules × path, is capped by a step budget per decision.

export interface CompiledPattern {
  /** the rule's pattern as written (percent-encoding normalised); its length ranks matches */
  pattern: string;
  /** literal pieces between `*`s; the first is anchored at the start of the path */
  segments: string[];
  /** the segments' KMP failure tables, end to end (segment i's starts at offsets[i]) */
  failures: number[];
  offsets: number[];
  /** a final `$`: the last segment must end the path */
  anchoredEnd: boolean;
  /** the characters the pattern needs (charMask): a path lacking one cannot match */
  needs: number[];
}

/** Steps a match may still take; spent counts them all. */
export interface StepBudget {
  left: number;
  spent: number;
}

export function stepBudget(steps: number): StepBudget {
  return { left: steps, spent: 0 };
}

export function compilePattern(pattern: string): CompiledPattern {
  const anchoredEnd = pattern.endsWith('$');
  const body = anchoredEnd ? pattern.slice(0, -1) : pattern;
  const segments = body.split('*');
  const joined = segments.join('');
  // one plain array a rule (a typed array a segment made compiling 1,239 rules of 200 segments
  // 250 ms), and only for the segments searched: the first is compared in place, and so is an
  // anchored last one
  const failures: number[] = new Array<number>(joined.length).fill(0);
  const offsets: number[] = [];
  let at = 0;
  for (let i = 0; i < segments.length; i++) {
    const seg = segments[i]!;
    offsets.push(at);
    if (i > 0 && !(anchoredEnd && i === segments.length - 1)) fillFailures(seg, failures, at);
    at += seg.length;
  }
  return { pattern, segments, failures, offsets, anchoredEnd, needs: charMask(joined) };
}

/** Bits 0–127: the ASCII code units in s; bit 128: any other. Five 32-bit words. */
export function charMask(s: string): number[] {
  const m = [0, 0, 0, 0, 0];
  for (let i = 0; i < s.length; i++) {
    const c = Math.min(s.charCodeAt(i), 128);
    m[c >>> 5]! |= 1 << (c & 31);
  }
  return m;
}

function covers(have: readonly number[], needs: readonly number[]): boolean {
  for (let i = 0; i < needs.length; i++) if ((needs[i]! & ~have[i]!) !== 0) return false;
  return true;
}

/** f[at + i]: the length of the longest proper border of needle[0..i]. */
function fillFailures(needle: string, f: number[], at: number): void {
  for (let i = 1, k = 0; i < needle.length; i++) {
    while (k > 0 && needle.charCodeAt(i) !== needle.charCodeAt(k)) k = f[at + k - 1]!;
    if (needle.charCodeAt(i) === needle.charCodeAt(k)) k++;
    f[at + i] = k;
  }
}

/**
 * Where `needle` first occurs in `hay` at or after `from`, or -1 (also when the budget runs out:
 * the caller checks it). Each character of `hay` costs a step, and each fallback one more.
 */
function findFrom(hay: string, needle: string, failure: readonly number[], base: number, from: number, budget: StepBudget): number {
  if (needle.length === 0) return from;
  for (let i = from, k = 0; i < hay.length; i++) {
    if (--budget.left < 0) return -1;
    budget.spent++;
    const c = hay.charCodeAt(i);
    while (k > 0 && c !== needle.charCodeAt(k)) {
      k = failure[base + k - 1]!;
      budget.left--;
      budget.spent++;
    }
    if (c === needle.charCodeAt(k)) k++;
    if (k === needle.length) return i - needle.length + 1;
  }
  return -1;
}

/** A path ready to be matched: the characters it holds, for the rules that need others. */
export interface Subject {
  path: string;
  has: number[];
}

export function subject(path: string): Subject {
  return { path, has: charMask(path) };
}

/** Whether the path matches; false too when the budget ran out (the caller checks it). */
export function matchesPattern(p: CompiledPattern, s: Subject, budget: StepBudget): boolean {
  const { segments } = p;
  const { path } = s;
  const first = segments[0]!;
  budget.left -= 1 + first.length;
  budget.spent += 1 + first.length;
  if (budget.left < 0 || !covers(s.has, p.needs) || !path.startsWith(first)) return false;
  if (segments.length === 1) return p.anchoredEnd ? path.length === first.length : true;
  let at = first.length;
  const last = segments.length - 1;
  for (let i = 1; i < last; i++) {
    const found = findFrom(path, segments[i]!, p.failures, p.offsets[i]!, at, budget);
    if (found < 0) return false;
    at = found + segments[i]!.length;
  }
  const tail = segments[last]!;
  if (p.anchoredEnd) {
    budget.left -= tail.length;
    budget.spent += tail.length;
    return budget.left >= 0 && path.length - tail.length >= at && path.endsWith(tail);
  }
  return findFrom(path, tail, p.failures, p.offsets[last]!, at, budget) >= 0;
}
