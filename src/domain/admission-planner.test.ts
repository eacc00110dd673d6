import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import type { Manifest, PageReport } from './contract.ts';
import { planAdmission, type PageRead, type PlanInput } from './admission-plan.ts';
import { AdmissionPlanner, chunkShare, LAST_CHUNK_SHARE, PAGE_ROWS_CHUNK, type ReadyRows } from './admission-planner.ts';
import { rulesFromFixed } from './rules/index.ts';

const now = new Date('2025-03-01T00:00:00.000Z');
const crawlId = '00000000-0000-4000-8000-000000000001';

const manifest = (taskId: string, status: Manifest['status']): Manifest => ({
  taskId,
  url: `https://a.test/${taskId}`,
  status,
  artifacts: [
    { format: 'wacz', bucket: 'captures', key: `p/${taskId}.wacz`, sha256: 'a', size: 1 },
    { format: 'links', bucket: 'captures', key: `p/${taskId}.links.json`, sha256: 'b', size: 1 },
  ],
  software: 'test',
  finishedAt: '2025-02-01T00:00:02.000Z',
});

/** A level of `n` pages; page i carries task `t<task(i)>` (so some share one), each read as given. */
const pageArb = fc.record({
  task: fc.integer({ min: 0, max: 12 }),
  read: fc.constantFrom('ok', 'failed', 'missing', 'absent'),
  links: fc.array(fc.integer({ min: 0, max: 40 }), { maxLength: 8 }),
});

function levelOf(specs: { task: number; read: string; links: number[] }[], taken: number | null): PlanInput {
  const pages: PageReport[] = specs.map((s, i) => ({
    url: `https://a.test/page/${i}`,
    status: 'captured',
    taskId: `t${s.task}`,
    manifestKey: `p/t${s.task}.result.json`,
  }));
  const reads: PageRead[] = specs.map((s) => {
    if (s.read === 'missing' || s.read === 'absent') return { read: { kind: s.read } };
    const read = { kind: 'ok' as const, manifest: manifest(`t${s.task}`, s.read === 'ok' ? 'succeeded' : 'failed') };
    return s.read === 'ok' ? { read, links: s.links.map((l) => ({ href: `/l/${l}` })) } : { read };
  });
  const rules = rulesFromFixed([{ follow: 'same-origin' }]);
  return {
    crawl: { rules, seeds: ['https://a.test/'], maxPages: 30, orgId: 'org', submittedBy: 'alice', perHostDelayMs: 0 },
    crawlId,
    depth: 0,
    report: { pages },
    pages,
    reads,
    foreign: new Set(['t12']),
    levelHosts: new Set(['a.test']),
    expand: taken === null ? null : { taken },
    now,
  };
}

describe('AdmissionPlanner', () => {
  it('pages added in any order give what planAdmission gives, and hand out every page once and the candidates in order', () => {
    fc.assert(
      fc.property(
        fc
          .array(pageArb, { maxLength: 30 })
          .chain((specs) =>
            fc.tuple(fc.constant(specs), fc.shuffledSubarray([...specs.keys()], { minLength: specs.length }), fc.option(fc.integer({ min: 0, max: 40 }))),
          ),
        fc.integer({ min: 1, max: 5 }),
        ([specs, order, taken], chunk) => {
          const input = levelOf(specs, taken);
          const planner = new AdmissionPlanner(input, { pages: chunk, candidates: chunk });
          const handed: ReadyRows[] = [];
          for (const i of order) {
            planner.add(i, input.reads[i]!);
            handed.push(planner.ready());
          }
          const { plan, rest } = planner.finish();
          handed.push(rest);
          const whole = planAdmission(input);
          expect(plan).toEqual(whole);

          const indexes = handed.flatMap((h) => h.pages?.indexes ?? []);
          expect([...indexes].sort((a, b) => a - b)).toEqual([...specs.keys()]);
          for (const h of handed) h.pages?.indexes.forEach((i, k) => expect(h.pages!.admissions[k]).toEqual(whole.admissions[i]));
          // the rows handed out are the plan's submissions: one per task, each the last report of it
          const submissions = handed.flatMap((h) => h.pages?.submissions ?? []);
          expect(submissions).toHaveLength(whole.submissions.length);
          expect(new Set(submissions.map((s) => JSON.stringify(s)))).toEqual(new Set(whole.submissions.map((s) => JSON.stringify(s))));
          expect(handed.flatMap((h) => h.candidates)).toEqual(whole.next?.candidates ?? []);
        },
      ),
      { numRuns: 200 },
    );
  });

  it('hands out page rows before the level is read, except those of pages that share a task', () => {
    const input = levelOf(
      [
        { task: 1, read: 'ok', links: [] },
        { task: 2, read: 'ok', links: [] },
        { task: 2, read: 'missing', links: [] },
      ],
      null,
    );
    const planner = new AdmissionPlanner(input, { pages: 1, candidates: 1 });
    planner.add(1, input.reads[1]!);
    expect(planner.ready().pages).toBeNull();
    planner.add(0, input.reads[0]!);
    expect(planner.ready().pages?.indexes).toEqual([0]);
    planner.add(2, input.reads[2]!);
    expect(planner.finish().rest.pages?.indexes).toEqual([1, 2]);
  });

  it('near the end the chunks shrink with what is unread: what is left to write after the last read is a sliver of a chunk', () => {
    // four chunks' worth of pages, each its own task, read in order
    const n = 4 * PAGE_ROWS_CHUNK;
    const input = levelOf(
      Array.from({ length: n }, (_, i) => ({ task: i, read: 'ok', links: [] })),
      null,
    );
    const planner = new AdmissionPlanner(input);
    const sizes: number[] = [];
    for (let i = 0; i < n; i++) {
      planner.add(i, input.reads[i]!);
      const pages = planner.ready().pages;
      if (pages !== null) sizes.push(pages.indexes.length);
    }
    const rest = planner.finish().rest.pages?.indexes.length ?? 0;
    // whole chunks while more than one is unread, then smaller ones
    expect(sizes.slice(0, 3)).toEqual([PAGE_ROWS_CHUNK, PAGE_ROWS_CHUNK, PAGE_ROWS_CHUNK]);
    expect(sizes.slice(3).every((k) => k < PAGE_ROWS_CHUNK)).toBe(true);
    expect(rest).toBeLessThanOrEqual(Math.ceil(PAGE_ROWS_CHUNK * LAST_CHUNK_SHARE));
    expect(sizes.reduce((a, b) => a + b, 0) + rest).toBe(n);
  });

  it('refuses a page added twice and a finish before every page', () => {
    const input = levelOf([{ task: 1, read: 'ok', links: [] }], 0);
    const planner = new AdmissionPlanner(input);
    expect(() => planner.finish()).toThrow(/not added/);
    planner.add(0, input.reads[0]!);
    expect(() => planner.add(0, input.reads[0]!)).toThrow(/twice/);
  });
});

describe('chunkShare', () => {
  it('is a whole chunk while more than one is unread, then the unread part of one, never below LAST_CHUNK_SHARE', () => {
    expect(chunkShare(5000)).toBe(1);
    expect(chunkShare(PAGE_ROWS_CHUNK)).toBe(1);
    expect(chunkShare(PAGE_ROWS_CHUNK / 2)).toBe(0.5);
    expect(chunkShare(0)).toBe(LAST_CHUNK_SHARE);
    expect(chunkShare(50, 100)).toBe(0.5);
    fc.assert(
      fc.property(fc.nat(100_000), fc.integer({ min: 1, max: 10_000 }), (unread, chunk) => {
        const share = chunkShare(unread, chunk);
        expect(share).toBeGreaterThanOrEqual(LAST_CHUNK_SHARE);
        expect(share).toBeLessThanOrEqual(1);
        if (unread >= chunk) expect(share).toBe(1);
        else expect(share).toBe(Math.max(LAST_CHUNK_SHARE, unread / chunk));
      }),
    );
  });
});
