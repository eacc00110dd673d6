// The crawl workflow indexes its crawl when it finishes and search is configured: a crawl started
// through the API (which asks for indexing when CAPTURE_LEDGER_OPENSEARCH_URL is set), one level
// reported by hand with a real WACZ behind the manifest, then the page is searchable with no
// POST /index from anyone.
import { randomBytes } from 'node:crypto';
import { PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { Client, Connection } from '@temporalio/client';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Config } from '../../src/config/env.ts';
import { writeWacz } from '../../src/domain/wacz/write.ts';
import { createS3 } from '../../src/s3/client.ts';
import { createSearchIndex } from '../../src/search/client.ts';
import { devHeaders, startTestApi, testApiConfig, type TestApi } from '../support/api.ts';
import { eventually, grant, levelPrefix, startWebhookStub, waitForCrawlEnd, writeCapture, type WebhookStub } from '../support/crawls.ts';
import { createTestDatabase, type TestDatabase } from '../support/db.ts';
import { createTestStore, type TestStore } from '../support/fga.ts';
import { drain } from '../support/ledger.ts';
import { startTestWorker, uniqueTaskQueue, type TestWorker } from '../support/temporal.ts';

const ORG = 'acme';
const FLOW = 'capture-flow';
const INDEX = `cl-test-search-crawl-${randomBytes(4).toString('hex')}`;

let tdb: TestDatabase;
let store: TestStore;
let hook: WebhookStub;
let api: TestApi;
let tw: TestWorker;
let connection: Connection;
let s3: S3Client;
let config: Config;

beforeAll(async () => {
  [tdb, store, hook] = await Promise.all([createTestDatabase(), createTestStore(), startWebhookStub()]);
  const env = {
    CAPTURE_LEDGER_CRAWL_WEBHOOK_URL: hook.url,
    CAPTURE_LEDGER_CRAWL_WEBHOOK_TOKEN: 'search-crawl-token',
    CAPTURE_LEDGER_TEMPORAL_TASK_QUEUE: uniqueTaskQueue('search-crawl'),
    CAPTURE_LEDGER_LEVEL_TIMEOUT_SECONDS: '30',
    CAPTURE_LEDGER_OPENSEARCH_URL: 'http://127.0.0.1:9200',
    CAPTURE_LEDGER_OPENSEARCH_INDEX: INDEX,
  };
  const base = testApiConfig({ tdb, store, env });
  connection = await Connection.connect({ address: base.temporal.address });
  const client = new Client({ connection, namespace: base.temporal.namespace });
  api = await startTestApi({ tdb, store, identity: 'dev', env, deps: { temporal: client } });
  config = { ...api.config, api: { ...api.config.api, publicUrl: api.url } };
  tw = await startTestWorker({ config, db: tdb.db, fga: store.client });
  s3 = createS3(config.s3);
  await grant(store.client, 'alice', 'submitter', ORG);
});

afterAll(async () => {
  await tw?.stop();
  await api?.close();
  await connection?.close();
  await hook?.close();
  s3?.destroy();
  const search = createSearchIndex({ url: 'http://127.0.0.1:9200', index: INDEX });
  await search.client.indices.delete({ index: INDEX }, { ignore: [404] });
  await search.client.close();
  await tdb?.drop();
});

it('a finished crawl is indexed by its workflow', async () => {
  const start = await fetch(`${api.url}/api/crawls`, {
    method: 'POST',
    headers: { ...devHeaders('alice', [ORG]), 'content-type': 'application/json' },
    body: JSON.stringify({ seeds: ['http://a.test/'], maxDepth: 0 }),
  });
  expect(start.status, await start.clone().text()).toBe(202);
  const { crawlId } = (await start.json()) as { crawlId: string };
  await hook.waitFor((d) => d.body.crawlId === crawlId && d.body.depth === 0);

  const page = await writeCapture(s3, config.s3.bucket, levelPrefix(crawlId, 0), { url: 'http://a.test/' });
  const when = new Date();
  const body = Buffer.from('<html><body>echidna</body></html>');
  const wacz = await writeWacz({
    software: 'capture-ledger search tests',
    created: when,
    pages: [{ url: 'http://a.test/', title: 'Spiny', text: 'An echidna crossed the road at dawn.', ts: when }],
    exchanges: [
      {
        url: 'http://a.test/',
        date: when,
        request: { method: 'GET', target: '/', httpVersion: 'HTTP/1.1', headers: [['Host', 'a.test']] },
        response: { status: 200, statusText: 'OK', httpVersion: 'HTTP/1.1', headers: [['Content-Type', 'text/html'], ['Content-Length', String(body.length)]], body },
      },
    ],
  });
  // the manifest names `<prefix>/<taskId>.wacz`; put real bytes there
  await s3.send(new PutObjectCommand({ Bucket: config.s3.bucket, Key: page.manifestKey.replace(/\.result\.json$/, '.wacz'), Body: wacz }));

  const rep = await fetch(`${api.url}/api/crawls/${crawlId}/levels/0`, {
    method: 'POST',
    headers: { ...devHeaders(FLOW, [ORG]), ...hook.capability(crawlId, 0), 'content-type': 'application/json' },
    body: JSON.stringify({ depth: 0, pages: [page] }),
  });
  expect(rep.status, await rep.clone().text()).toBeLessThan(300);
  const row = await waitForCrawlEnd(tdb.db, crawlId);
  expect(row.state).toBe('succeeded');

  // indexed_at is set only once the page is searchable, so no waiting on the index after this
  const archive = await eventually(
    async () => tdb.db.selectFrom('archives').select(['id', 'indexed_at']).where('task_id', '=', page.taskId).where('indexed_at', 'is not', null).executeTakeFirst(),
    20_000,
    'archive indexed by the workflow',
  );
  await drain(tdb.db, store.client);
  const res = await fetch(`${api.url}/api/search?q=echidna`, { headers: devHeaders('carol', [ORG]) });
  expect(res.status).toBe(200);
  const found = (await res.json()) as { hits: { archiveId: string; title: string }[]; total: number };
  expect(found.total).toBe(1);
  expect(found.hits).toEqual([expect.objectContaining({ archiveId: archive.id, title: 'Spiny' })]);
  // and an outsider sees the count but not the page
  const outside = await fetch(`${api.url}/api/search?q=echidna`, { headers: devHeaders('mallory', ['globex']) });
  expect(await outside.json()).toEqual({ hits: [], total: 1 });
});
