// The crawl workflow indexes its crawl when it finishes and search is configured: a crawl started
// through the API (which asks for indexing when CAPTURE_LEDGER_OPENSEARCH_URL is set), one level
// reported by hand with a real WACZ behind the manifest, then the page is searchable with no
// POST /index from anyone.
import { randomBytes } from 'node:crypto';
import { PutObjectCommand } from '@aws-sdk/client-s3';
import { afterAll, expect, it } from 'vitest';
import { createSearchIndex } from '../../src/search/client.ts';
import { devHeaders } from '../support/api.ts';
import { eventually, levelPrefix, waitForCrawlEnd, writeCapture } from '../support/crawls.ts';
import { useHarness } from '../support/harness.ts';
import { drain } from '../support/ledger.ts';
import { oneResponseWacz } from '../support/wacz.ts';

const ORG = 'acme';
const FLOW = 'capture-flow';
const INDEX = `cl-test-search-crawl-${randomBytes(4).toString('hex')}`;

const h = useHarness({
  crawls: 'stub',
  env: { CAPTURE_LEDGER_LEVEL_TIMEOUT_SECONDS: '30', CAPTURE_LEDGER_OPENSEARCH_URL: 'http://127.0.0.1:9200', CAPTURE_LEDGER_OPENSEARCH_INDEX: INDEX },
  grants: [['alice', 'submitter', ORG]],
});

afterAll(async () => {
  const search = createSearchIndex({ url: 'http://127.0.0.1:9200', index: INDEX });
  await search.client.indices.delete({ index: INDEX }, { ignore: [404] });
  await search.client.close();
});

it('a finished crawl is indexed by its workflow', async () => {
  const start = await fetch(`${h.api.url}/api/crawls`, {
    method: 'POST',
    headers: { ...devHeaders('alice', [ORG]), 'content-type': 'application/json' },
    body: JSON.stringify({ seeds: ['http://a.test/'], maxDepth: 0 }),
  });
  expect(start.status, await start.clone().text()).toBe(202);
  const { crawlId } = (await start.json()) as { crawlId: string };
  await h.hook.waitFor((d) => d.body.crawlId === crawlId && d.body.depth === 0);

  const page = await writeCapture(h.s3, h.config.s3.bucket, levelPrefix(crawlId, 0), { url: 'http://a.test/' });
  const when = new Date();
  const wacz = await oneResponseWacz({
    software: 'capture-ledger search tests',
    created: when,
    pages: [{ url: 'http://a.test/', title: 'Spiny', text: 'An echidna crossed the road at dawn.', ts: when }],
    body: Buffer.from('<html><body>echidna</body></html>'),
  });
  // the manifest names `<prefix>/<taskId>.wacz`; put real bytes there
  await h.s3.send(new PutObjectCommand({ Bucket: h.config.s3.bucket, Key: page.manifestKey.replace(/\.result\.json$/, '.wacz'), Body: wacz }));

  const rep = await fetch(`${h.api.url}/api/crawls/${crawlId}/levels/0`, {
    method: 'POST',
    headers: { ...devHeaders(FLOW, [ORG]), ...h.hook.capability(crawlId, 0), 'content-type': 'application/json' },
    body: JSON.stringify({ depth: 0, pages: [page] }),
  });
  expect(rep.status, await rep.clone().text()).toBeLessThan(300);
  const row = await waitForCrawlEnd(h.tdb.db, crawlId);
  expect(row.state).toBe('succeeded');

  // indexed_at is set only once the page is searchable, so no waiting on the index after this
  const archive = await eventually(
    async () =>
      h.tdb.db.selectFrom('archives').select(['id', 'indexed_at']).where('task_id', '=', page.taskId).where('indexed_at', 'is not', null).executeTakeFirst(),
    20_000,
    'archive indexed by the workflow',
  );
  await drain(h.tdb.db, h.store.client);
  const res = await fetch(`${h.api.url}/api/search?q=echidna`, { headers: devHeaders('carol', [ORG]) });
  expect(res.status).toBe(200);
  const found = (await res.json()) as { hits: { archiveId: string; title: string }[]; total: number };
  expect(found.total).toBe(1);
  expect(found.hits).toEqual([expect.objectContaining({ archiveId: archive.id, title: 'Spiny' })]);
  // and an outsider sees the count but not the page
  const outside = await fetch(`${h.api.url}/api/search?q=echidna`, { headers: devHeaders('mallory', ['globex']) });
  expect(await outside.json()).toEqual({ hits: [], total: 1 });
});
