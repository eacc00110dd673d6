import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { levelPrefix } from './level.ts';
import { crawlKeyProblem, expectedManifestKey, foreignTaskProblem, pagesNamingTasks } from './level-dispatch.ts';

const A = '00000000-0000-4000-8000-00000000000a';
const B = '00000000-0000-4000-8000-00000000000b';
const taskId = fc.stringMatching(/^[A-Za-z0-9_-][A-Za-z0-9._-]{0,40}$/).filter((t) => t !== '..');
const depth = fc.integer({ min: 0, max: 20 });

describe('pagesNamingTasks', () => {
  it('names exactly the pages whose task id is foreign, with their URL', () => {
    const pages = [
      { url: 'http://a.test/1', status: 'captured' as const, taskId: 't1' },
      { url: 'http://a.test/2', status: 'failed' as const },
      { url: 'http://a.test/3', status: 'captured' as const, taskId: 't3' },
    ];
    expect(pagesNamingTasks(pages, new Set(['t3', 'elsewhere']))).toEqual([{ url: 'http://a.test/3', taskId: 't3' }]);
    expect(pagesNamingTasks(pages, new Set())).toEqual([]);
  });
  it('the problem names the task', () => {
    expect(foreignTaskProblem('t1')).toBe('task id "t1" is on record for another crawl or level');
  });
});

describe('crawlKeyProblem', () => {
  it('a key under one of its crawl’s dispatched prefixes is its own, under another crawl’s it is not', () => {
    fc.assert(
      fc.property(taskId, depth, depth, (t, d, other) => {
        const own = [levelPrefix(A, d), levelPrefix(A, other)];
        expect(crawlKeyProblem({ manifestKey: expectedManifestKey(levelPrefix(A, d), t), taskId: t, crawlId: A }, own)).toBeNull();
        const foreign = expectedManifestKey(levelPrefix(B, d), t);
        expect(crawlKeyProblem({ manifestKey: foreign, taskId: t, crawlId: A }, own)).toBe(
          `manifest key ${JSON.stringify(foreign)} is not under a prefix of crawl ${A}`,
        );
        // with no dispatch on record, the prefix must still name the crawl
        expect(crawlKeyProblem({ manifestKey: foreign, taskId: t, crawlId: A }, [])).not.toBeNull();
        expect(crawlKeyProblem({ manifestKey: expectedManifestKey(`legacy/${A}/${d}/`, t), taskId: t, crawlId: A }, [])).toBeNull();
      }),
    );
  });
  it('a key that is not <prefix><taskId>.result.json is refused whatever the prefixes', () => {
    expect(crawlKeyProblem({ manifestKey: `${levelPrefix(A, 0)}t2.result.json`, taskId: 't1', crawlId: A }, [levelPrefix(A, 0)])).toBe(
      `manifest key "captures/${A}/0/t2.result.json" is not <prefix>t1.result.json`,
    );
  });
  it('a crawl id merely contained in a segment is not the crawl', () => {
    expect(crawlKeyProblem({ manifestKey: `captures/x${A}/0/t.result.json`, taskId: 't', crawlId: A }, [])).not.toBeNull();
  });
});
