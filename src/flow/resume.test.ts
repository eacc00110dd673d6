import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { Manifest } from '../domain/contract.ts';
import { earlierCaptures, manifestKeyOf, pageTaskId, reportFromManifest } from './resume.ts';
import { memoryStore } from './store.ts';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const manifest = (over: Partial<Manifest>): Manifest => ({ taskId: 't', url: 'http://a.test/', status: 'succeeded', artifacts: [], startedAt: '2026-11-30T10:00:00.000Z', finishedAt: '2026-11-30T10:00:01.000Z', ...over });

describe('pageTaskId', () => {
  it('is a version-8 UUID, the same for the same page of the same level and different otherwise', () => {
    fc.assert(
      fc.property(fc.uuid(), fc.nat(20), fc.webUrl(), fc.webUrl(), (crawl, depth, a, b) => {
        const id = pageTaskId(crawl, depth, a);
        expect(id).toMatch(UUID);
        expect(pageTaskId(crawl, depth, a)).toBe(id);
        expect(pageTaskId(crawl, depth + 1, a)).not.toBe(id);
        if (a !== b) expect(pageTaskId(crawl, depth, b)).not.toBe(id);
      }),
    );
  });

  it('does not run fields together: depth 1 of url "2x" is not depth 12 of "x"', () => {
    expect(pageTaskId('c', 1, '2http://x/')).not.toBe(pageTaskId('c', 12, 'http://x/'));
  });
});

describe('reportFromManifest', () => {
  it('reports a succeeded manifest as captured with its own timestamps and key', () => {
    expect(reportFromManifest('http://a.test/', 't', 'p/t.result.json', manifest({ finalUrl: 'http://a.test/x' }))).toEqual({
      url: 'http://a.test/', status: 'captured', taskId: 't', manifestKey: 'p/t.result.json', finalUrl: 'http://a.test/x',
      submittedAt: '2026-11-30T10:00:00.000Z', finishedAt: '2026-11-30T10:00:01.000Z',
    });
    expect(reportFromManifest('http://a.test/', 't', 'k', manifest({ status: 'failed' }))?.status).toBe('failed');
  });

  it('refuses a manifest of another task or URL (not this page\'s: capture again)', () => {
    expect(reportFromManifest('http://a.test/', 't', 'k', manifest({ taskId: 'u' }))).toBeUndefined();
    expect(reportFromManifest('http://a.test/', 't', 'k', manifest({ url: 'http://b.test/' }))).toBeUndefined();
  });
});

describe('earlierCaptures', () => {
  const d = { crawlId: 'c1', depth: 1, pages: ['http://a.test/1', 'http://a.test/2', 'http://a.test/3', 'http://a.test/4'].map((url) => ({ url })) };

  it('finds exactly the pages whose manifests are under their derived keys; an unreadable one is captured again', async () => {
    const store = memoryStore();
    const put = (i: number, m: Manifest | string) => store.put(manifestKeyOf('captures/c1/1', pageTaskId('c1', 1, d.pages[i]!.url)), Buffer.from(typeof m === 'string' ? m : JSON.stringify(m)), 'application/json');
    await put(0, manifest({ taskId: pageTaskId('c1', 1, d.pages[0]!.url), url: d.pages[0]!.url }));
    await put(2, manifest({ taskId: pageTaskId('c1', 1, d.pages[2]!.url), url: d.pages[2]!.url, status: 'failed' }));
    await put(3, '{not json');
    const lines: string[] = [];
    const found = await earlierCaptures(d, 'captures/c1/1', store, (l) => lines.push(l));
    expect([...found.keys()].sort()).toEqual([0, 2]);
    expect(found.get(0)).toMatchObject({ url: 'http://a.test/1', status: 'captured', manifestKey: `captures/c1/1/${pageTaskId('c1', 1, 'http://a.test/1')}.result.json` });
    expect(found.get(2)?.status).toBe('failed');
    expect(lines.some((l) => l.includes('http://a.test/4') && l.includes('capturing it again'))).toBe(true);
    expect(lines).toContain('level c1/1: 2 of 4 pages already captured by an earlier attempt; reported from their manifests');
  });

  it('a store that cannot read finds nothing', async () => {
    expect((await earlierCaptures(d, 'p', { put: async () => {} } as never, () => {})).size).toBe(0);
  });
});
