import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import type { Manifest, PageReport } from './contract.ts';
import { ERROR_TYPE_ADDRESS_REFUSED } from './contract.ts';
import { CUT_ROWS_KEPT, admittedPages, capturesOf, linksToRead, planAdmission, type PageRead, type PlanInput } from './admission-plan.ts';
import { admitPage } from './admission.ts';
import { rulesFromFixed } from './rules/index.ts';

const now = new Date('2025-03-01T00:00:00.000Z');
const crawlId = '00000000-0000-4000-8000-000000000001';

function manifest(taskId: string, over: Partial<Manifest> = {}): Manifest {
  return {
    taskId,
    url: `https://a.test/${taskId}`,
    status: 'succeeded',
    artifacts: [
      { format: 'wacz', bucket: 'captures', key: `p/${taskId}.wacz`, sha256: 'a', size: 1 },
      { format: 'links', bucket: 'captures', key: `p/${taskId}.links.json`, sha256: 'b', size: 1 },
    ],
    software: 'test',
    finishedAt: '2025-02-01T00:00:02.000Z',
    ...over,
  };
}

const page = (taskId: string, over: Partial<PageReport> = {}): PageReport => ({
  url: `https://a.test/${taskId}`,
  status: 'captured',
  taskId,
  manifestKey: `p/${taskId}.result.json`,
  ...over,
});

const ok = (m: Manifest, links?: string[]): PageRead => ({
  read: { kind: 'ok', manifest: m },
  ...(links !== undefined ? { links: links.map((href) => ({ href })) } : {}),
});

function input(pages: PageReport[], reads: PageRead[], over: Partial<PlanInput> = {}): PlanInput {
  return {
    crawlId,
    depth: 0,
    crawl: {
      orgId: 'org',
      submittedBy: 'alice',
      rules: rulesFromFixed([{ follow: 'same-origin' }]),
      seeds: ['https://a.test/'],
      maxPages: 100,
      perHostDelayMs: 1000,
    },
    report: { pages },
    pages,
    reads,
    foreign: new Set(),
    levelHosts: new Set(['a.test']),
    expand: { taken: 0 },
    now,
    ...over,
  };
}

describe('linksToRead', () => {
  const level = { depth: 0, maxDepth: 1, action: 'follow' as const };
  it('names the links artifact of a succeeded follow page of its own task', () => {
    expect(linksToRead(page('t1'), { kind: 'ok', manifest: manifest('t1') }, level)).toMatchObject({ key: 'p/t1.links.json' });
  });
  it('names nothing for a failed capture, another task, a capture-only page, the last level or no manifest', () => {
    expect(linksToRead(page('t1'), { kind: 'ok', manifest: manifest('t1', { status: 'failed' }) }, level)).toBeNull();
    expect(linksToRead(page('t1'), { kind: 'ok', manifest: manifest('t2') }, level)).toBeNull();
    expect(linksToRead(page('t1'), { kind: 'ok', manifest: manifest('t1') }, { ...level, action: 'capture' })).toBeNull();
    expect(linksToRead(page('t1'), { kind: 'ok', manifest: manifest('t1') }, { ...level, depth: 1 })).toBeNull();
    expect(linksToRead(page('t1'), { kind: 'missing' }, level)).toBeNull();
  });
  it('agrees with admitPage: links are read exactly for the pages admission captures with a links artifact', () => {
    fc.assert(
      fc.property(fc.constantFrom('t1', 't2'), fc.constantFrom('succeeded' as const, 'failed' as const), fc.boolean(), (taskId, status, withLinks) => {
        const m = manifest(taskId, {
          status,
          ...(withLinks ? {} : { artifacts: [{ format: 'wacz', bucket: 'captures', key: `p/${taskId}.wacz`, sha256: 'a', size: 1 }] }),
        });
        const read = { kind: 'ok' as const, manifest: m };
        const a = admitPage(page('t1'), read, now);
        expect(linksToRead(page('t1'), read, level) !== null).toBe(a.state === 'captured' && a.links !== null);
      }),
    );
  });
});

describe('planAdmission', () => {
  it('admits every page, one submission per task, the chosen links as the next level', () => {
    const pages = [page('t1'), page('t2', { status: 'failed', manifestKey: undefined, manifestError: 'boom' })];
    const plan = planAdmission(input(pages, [ok(manifest('t1'), ['/x', '/y', 'https://b.test/']), { read: { kind: 'absent' } }]));
    expect(plan.admissions.map((a) => a.state)).toEqual(['captured', 'failed']);
    expect(plan.submissions).toEqual([
      {
        taskId: 't1',
        orgId: 'org',
        submittedBy: 'alice',
        crawlId,
        url: 'https://a.test/t1',
        manifestKey: 'p/t1.result.json',
        manifestVersion: null,
        manifestError: null,
      },
      { taskId: 't2', orgId: 'org', submittedBy: 'alice', crawlId, url: 'https://a.test/t2', manifestKey: null, manifestVersion: null, manifestError: 'boom' },
    ]);
    expect(plan.next?.candidates.map((c) => c.url)).toEqual(['https://a.test/x', 'https://a.test/y']);
    expect(plan.next?.skipped).toEqual(['https://b.test/']);
    expect(plan.linksRead).toBe(1);
    expect(capturesOf(plan.admissions, crawlId).map((c) => c.archive.objectKey)).toEqual(['p/t1.wacz']);
  });

  it('keeps the manifest version the report named in the submission (what reconcile reads), and none without a key', () => {
    const pages = [
      page('t1', { manifestVersionId: 'v-1' }),
      page('t2', { status: 'failed', manifestKey: undefined, manifestVersionId: 'v-2', manifestError: 'lost' }),
      page('t3'),
    ];
    const plan = planAdmission(input(pages, [ok(manifest('t1'), []), { read: { kind: 'absent' } }, ok(manifest('t3'), [])]));
    expect(plan.submissions.map((s) => [s.taskId, s.manifestKey, s.manifestVersion])).toEqual([
      ['t1', 'p/t1.result.json', 'v-1'],
      ['t2', null, null],
      ['t3', 'p/t3.result.json', null],
    ]);
  });

  it('plans no next level when not expanding', () => {
    const plan = planAdmission(input([page('t1')], [ok(manifest('t1'), ['/x'])], { expand: null }));
    expect(plan.next).toBeNull();
  });

  it('fails a page whose task another crawl holds: no task, no archive, no submission', () => {
    const plan = planAdmission(input([page('t1')], [ok(manifest('t1'))], { foreign: new Set(['t1']) }));
    expect(plan.admissions[0]).toMatchObject({ state: 'failed', taskId: null, archive: null, notAdmitted: 'refused' });
    expect(plan.submissions).toEqual([]);
    expect(plan.notes.refused).toHaveLength(1);
  });

  it('the last report of a task wins its submission', () => {
    const pages = [page('t1', { url: 'https://a.test/one' }), page('t1', { url: 'https://a.test/two' })];
    const plan = planAdmission(input(pages, [{ read: { kind: 'missing' } }, { read: { kind: 'missing' } }]));
    expect(plan.submissions.map((s) => s.url)).toEqual(['https://a.test/two']);
  });

  it('tallies fetch refusals and the links the capturer dropped', () => {
    const refused = manifest('t1', { status: 'failed', error: { type: ERROR_TYPE_ADDRESS_REFUSED, message: 'no' } as never });
    const dropped = { ...manifest('t2'), dropped: { links: 7 } } as Manifest;
    const plan = planAdmission(input([page('t1'), page('t2')], [ok(refused), ok(dropped)]));
    expect(plan.refusals.map((r) => [r.code, r.urls])).toEqual([
      ['fetch-refused', 1],
      ['too-many-links', 7],
    ]);
  });

  it('notes unreadable manifests and unreadable links artifacts', () => {
    const plan = planAdmission(
      input(
        [page('t1'), page('t2')],
        [{ read: { kind: 'unreadable', error: 'down' } }, { read: { kind: 'ok', manifest: manifest('t2') }, linksError: 'missing' }],
      ),
    );
    expect(plan.notes.unreadable).toBe(1);
    expect(plan.notes.linksErrors).toEqual([{ url: 'https://a.test/t2', error: 'missing' }]);
  });

  it('inserts at most the budget plus CUT_ROWS_KEPT candidates and counts the rest as cut', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 1500 }), fc.integer({ min: 0, max: 120 }), (links, taken) => {
        const hrefs = Array.from({ length: links }, (_, i) => `/l/${i}`);
        const plan = planAdmission(input([page('t1')], [ok(manifest('t1'), hrefs)], { expand: { taken } }));
        const slots = Math.max(0, 100 - taken);
        expect(plan.next!.slots).toBe(slots);
        expect(plan.next!.candidates.length).toBe(Math.min(links, slots + CUT_ROWS_KEPT));
        expect(plan.next!.candidates.length + plan.next!.cutUninserted).toBe(links);
      }),
      { numRuns: 30 },
    );
  });
});

describe('admittedPages', () => {
  it('keeps the last report of each dispatched URL, in the order first reported', () => {
    const reported = [
      { url: 'a', n: 1 },
      { url: 'x', n: 2 },
      { url: 'b', n: 3 },
      { url: 'a', n: 4 },
    ];
    expect(admittedPages(reported, new Set(['a', 'b']))).toEqual([
      { url: 'a', n: 4 },
      { url: 'b', n: 3 },
    ]);
  });
});
