// sendBulk against a node that answers as OpenSearch does when refusing a bulk whole (413, 429):
// a lone document refused for pressure is sent again after each pause and left for the next run
// only when still refused; one too large is refused at once; a refused batch is split in halves.
import { describe, expect, it } from 'vitest';
import { bulkEntry, PRESSURE_PAUSES_MS, sendBulk } from './bulk-send.ts';
import type { SearchIndex } from './client.ts';
import type { IndexFailure } from './index-failure.ts';

/** A node that refuses the first `refusals` requests with `status`, then takes every document; the documents of each request it saw. */
function node(status: number, refusals: number): { search: SearchIndex; requests: string[][] } {
  const requests: string[][] = [];
  const bulk = async ({ body }: { body: string }) => {
    requests.push([...body.matchAll(/"_id":"([^"]+)"/g)].map((m) => m[1]!));
    if (requests.length <= refusals) throw Object.assign(new Error(`refused ${status}`), { meta: { statusCode: status } });
    return { body: { errors: false } };
  };
  return { search: { client: { bulk } as unknown as SearchIndex['client'], index: 'pages' }, requests };
}

const entry = (archiveId: string) => bulkEntry('pages', `${archiveId}:0`, { archiveId, position: 0 });

async function send(search: SearchIndex, ids: string[], pauses: number[]) {
  const refused: { archiveId: string; failure: IndexFailure }[] = [];
  await sendBulk(search, ids.map(entry), (archiveId, failure) => refused.push({ archiveId, failure }), pauses);
  return refused.map((r) => ({ archiveId: r.archiveId, permanent: r.failure.permanent, message: r.failure.error.message }));
}

describe('sendBulk', () => {
  it('a lone document refused for pressure is sent again after each pause, and taken', async () => {
    const { search, requests } = node(429, 2);
    expect(await send(search, ['a'], [0, 0, 0])).toEqual([]);
    expect(requests).toEqual([['a:0'], ['a:0'], ['a:0']]);
  });

  it('still refused after every pause, it is left for the next run (not for good)', async () => {
    const { search, requests } = node(429, 10);
    expect(await send(search, ['a'], [0, 0])).toEqual([{ archiveId: 'a', permanent: false, message: expect.stringContaining('for now (429') }]);
    expect(requests).toHaveLength(3);
  });

  it('a lone document too large (413) is refused for good at once', async () => {
    const { search, requests } = node(413, 10);
    expect(await send(search, ['a'], [0, 0])).toEqual([{ archiveId: 'a', permanent: true, message: expect.stringContaining('as too large (413)') }]);
    expect(requests).toHaveLength(1);
  });

  it('a batch refused for pressure is split in halves before any pause', async () => {
    const { search, requests } = node(429, 1);
    expect(await send(search, ['a', 'b', 'c'], [0])).toEqual([]);
    expect(requests).toEqual([['a:0', 'b:0', 'c:0'], ['a:0', 'b:0'], ['c:0']]);
  });

  it('pauses a few seconds at most in all', () => {
    expect(PRESSURE_PAUSES_MS.length).toBeGreaterThan(0);
    expect(PRESSURE_PAUSES_MS.reduce((a, b) => a + b, 0)).toBeLessThanOrEqual(10_000);
  });
});

describe('sendBulk, items refused in a request the node took', () => {
  /** A node that takes every request and refuses the documents `refuse` names with their status, each `times` times. */
  function itemNode(refuse: Record<string, { status: number; times: number }>): { search: SearchIndex; requests: string[][] } {
    const requests: string[][] = [];
    const seen = new Map<string, number>();
    const bulk = async ({ body }: { body: string }) => {
      const ids = [...body.matchAll(/"_id":"([^"]+)"/g)].map((m) => m[1]!);
      requests.push(ids);
      const items = ids.map((id) => {
        const n = (seen.get(id) ?? 0) + 1;
        seen.set(id, n);
        const r = refuse[id];
        return r !== undefined && n <= r.times
          ? { index: { _id: id, status: r.status, error: { type: 'es_rejected_execution_exception', reason: 'pressed' } } }
          : { index: { _id: id, status: 201 } };
      });
      return { body: { errors: items.some((i) => i.index.status >= 400), items } };
    };
    return { search: { client: { bulk } as unknown as SearchIndex['client'], index: 'pages' }, requests };
  }

  it('those refused for pressure go again after a pause, alone; the rest were taken', async () => {
    const { search, requests } = itemNode({ 'b:0': { status: 429, times: 2 } });
    expect(await send(search, ['a', 'b', 'c'], [0, 0])).toEqual([]);
    expect(requests).toEqual([['a:0', 'b:0', 'c:0'], ['b:0'], ['b:0']]);
  });

  it('still pressed after every pause, or refused for themselves, they are refused', async () => {
    const { search, requests } = itemNode({ 'a:0': { status: 429, times: 9 }, 'c:0': { status: 400, times: 9 } });
    expect(await send(search, ['a', 'b', 'c'], [0])).toEqual([
      { archiveId: 'c', permanent: true, message: expect.stringContaining('refused page 0') },
      { archiveId: 'a', permanent: false, message: expect.stringContaining('refused page 0') },
    ]);
    expect(requests).toEqual([['a:0', 'b:0', 'c:0'], ['a:0']]);
  });
});
