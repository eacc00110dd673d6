// Robots matching bench: the longest the event loop is held by one robots.txt decision, for the
// issue's pathological file (1,239 rules like `Disallow: /*a*a…*b`, an 8,000-character path) and
// for the worst this matcher allows (25,000 rules, each of which would scan the whole of the
// longest URL taken, cut off by MATCH_STEP_BUDGET). Goal: parse + one decision under 50 ms.
//
//   node bench/robots.ts        (or via npm run bench, which calls run())
import { fileURLToPath } from 'node:url';
import { MAX_URL_LENGTH } from '../src/domain/address-policy.ts';
import { robotsFrom } from '../src/domain/robots.ts';
import { load1Now } from './support-figures.ts';

export interface RobotsBenchResult {
  bench: 'robots';
  case: string;
  rules: number;
  bodyBytes: number;
  pathLength: number;
  /** robotsFrom (parse) then isAllowed, median of 5, ms */
  parseMs: number;
  decideMs: number;
  goalMs: number;
  /** the one-minute load average when the case started */
  load1: number;
  ok: boolean;
}

const GOAL_MS = 50;
const ORIGIN = 'http://robots.bench';

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}

function measure(name: string, rules: number, rule: (i: number) => string, path: string): RobotsBenchResult {
  const body = `User-agent: *\n${Array.from({ length: rules }, (_, i) => `Disallow: ${rule(i)}`).join('\n')}\n`;
  const load1 = load1Now();
  const parse: number[] = [];
  const decide: number[] = [];
  for (let k = 0; k < 5; k++) {
    const t0 = performance.now();
    const r = robotsFrom({ kind: 'ok', body }, `${ORIGIN}/`);
    const t1 = performance.now();
    r.isAllowed(`${ORIGIN}${path}`);
    decide.push(performance.now() - t1);
    parse.push(t1 - t0);
  }
  const parseMs = Math.round(median(parse) * 10) / 10;
  const decideMs = Math.round(median(decide) * 10) / 10;
  return {
    bench: 'robots',
    case: name,
    rules,
    bodyBytes: body.length,
    pathLength: path.length,
    parseMs,
    decideMs,
    goalMs: GOAL_MS,
    load1,
    ok: parseMs + decideMs < GOAL_MS,
  };
}

export function run(): RobotsBenchResult[] {
  const pathological = `/${'a'.repeat(7999)}`;
  // about 400 bytes a rule: 1,239 of them fill the 500 KiB RFC 9309 asks a crawler to read
  const issue = (i: number) => `/${'*a'.repeat(200)}*b${i}`;
  // every rule needs only characters the path has, and scans all of it for a pair it lacks
  const half = Math.floor((MAX_URL_LENGTH - ORIGIN.length - 1) / 2);
  const longest = `/${'b'.repeat(half)}${'a'.repeat(half)}`;
  const worst = (i: number) => `/*${'a'.repeat(1 + (i % 8))}b`;
  return [measure('issue-29', 1239, issue, pathological), measure('budget-longest-url', 25_000, worst, longest)];
}

if (process.argv[1] === fileURLToPath(import.meta.url)) for (const r of run()) console.log(JSON.stringify(r));
