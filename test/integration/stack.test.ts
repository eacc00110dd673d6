// harness: not used because it checks each service of the stack by itself, through that service's own client.
// Each service of the local stack is the real thing: a workflow runs on the Temporal dev server
// through a real worker, OpenFGA decides from stored tuples, SeaweedFS verifies signatures, and
// Postgres answers on the ledger database.
import { randomBytes, randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { DeleteObjectCommand, GetObjectCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import { Client, Connection } from '@temporalio/client';
import { NativeConnection, Worker, bundleWorkflowCode } from '@temporalio/worker';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { createS3 } from '../../src/s3/client.ts';
import { SEARCH_ATTRIBUTES } from '../../temporal.config.ts';
import * as activities from '../fixtures/activities.ts';
import { testConfig } from '../support/config.ts';
import { createTestStore } from '../support/fga.ts';
import { uniqueTaskQueue } from '../support/temporal.ts';

// this file needs no pinned OpenFGA ids (createTestStore makes its own store)
const cfg = testConfig({ CAPTURE_LEDGER_FGA_STORE_ID: 'unset', CAPTURE_LEDGER_FGA_MODEL_ID: 'unset' });
const cleanups: (() => Promise<unknown>)[] = [];
afterAll(async () => {
  for (const c of cleanups.reverse()) await c();
});

describe('Temporal dev server', () => {
  it('runs the tests in a namespace of their own, never the one the apps use', () => {
    expect(cfg.temporal.namespace).toBe(process.env.CAPTURE_LEDGER_TEMPORAL_TEST_NAMESPACE);
    expect(cfg.temporal.namespace).not.toBe('default');
    expect(cfg.temporal.namespace).toMatch(/\S/);
  });

  it('runs a workflow through a real worker and returns its result', async () => {
    const workflowBundle = await bundleWorkflowCode({
      workflowsPath: fileURLToPath(new URL('../fixtures/workflows.ts', import.meta.url)),
      logger: undefined,
    });
    const nativeConnection = await NativeConnection.connect({ address: cfg.temporal.address });
    cleanups.push(() => nativeConnection.close());
    const taskQueue = uniqueTaskQueue('stack-test');
    const worker = await Worker.create({ connection: nativeConnection, namespace: cfg.temporal.namespace, taskQueue, workflowBundle, activities });
    const connection = await Connection.connect({ address: cfg.temporal.address });
    cleanups.push(() => connection.close());
    const client = new Client({ connection, namespace: cfg.temporal.namespace });

    const workflowId = `stack-probe-${randomUUID()}`;
    const result = await worker.runUntil(
      client.workflow.execute('stackProbe', { taskQueue, workflowId, args: ['ping', 2], workflowExecutionTimeout: '30 seconds' }),
    );
    expect(result).toBe('PING! PING! from stackProbe');

    // the run is in the server's history, and the search attribute it upserted is registered
    const described = await client.workflow.getHandle(workflowId).describe();
    expect(described.status.name).toBe('COMPLETED');
    expect(described.searchAttributes.CrawlState).toEqual(['probing']);
    const { customAttributes } = await connection.operatorService.listSearchAttributes({ namespace: cfg.temporal.namespace });
    const KEYWORD = 2; // temporal.api.enums.v1.IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD
    for (const [name, type] of Object.entries(SEARCH_ATTRIBUTES)) {
      expect(type).toBe('Keyword');
      expect(customAttributes[name], name).toBe(KEYWORD);
    }
  });
});

describe('OpenFGA', () => {
  it('answers allowed for a written tuple and not for a missing one', async () => {
    const store = await createTestStore();
    const org = `org-${randomBytes(4).toString('hex')}`;
    await store.client.write({ writes: [{ user: 'user:alice', relation: 'submitter', object: `organization:${org}` }] });
    const yes = await store.client.check({ user: 'user:alice', relation: 'can_submit', object: `organization:${org}` });
    const no = await store.client.check({ user: 'user:bob', relation: 'can_submit', object: `organization:${org}` });
    expect(yes.allowed).toBe(true);
    expect(no.allowed).toBe(false);
  });
});

describe('SeaweedFS S3', () => {
  it('accepts an upload, serves it by presigned GET, and refuses a tampered signature', async () => {
    const s3 = createS3(cfg.s3);
    cleanups.push(async () => s3.destroy());
    const key = `stack-test/${randomUUID()}.bin`;
    const body = randomBytes(4096);
    await s3.send(new PutObjectCommand({ Bucket: cfg.s3.bucket, Key: key, Body: body, ContentType: 'application/octet-stream' }));
    cleanups.push(() => s3.send(new DeleteObjectCommand({ Bucket: cfg.s3.bucket, Key: key })));

    const url = await getSignedUrl(s3, new GetObjectCommand({ Bucket: cfg.s3.bucket, Key: key }), { expiresIn: 60 });
    const signed = new URL(url);
    expect(signed.searchParams.get('X-Amz-SignedHeaders')).toBe('host');

    const ok = await fetch(url);
    expect(ok.status).toBe(200);
    expect(Buffer.from(await ok.arrayBuffer()).equals(body)).toBe(true);

    const sig = signed.searchParams.get('X-Amz-Signature')!;
    const flipped = sig.slice(0, -1) + (sig.endsWith('0') ? '1' : '0');
    signed.searchParams.set('X-Amz-Signature', flipped);
    const tampered = await fetch(signed);
    await tampered.arrayBuffer();
    expect(tampered.status).toBe(403);

    const unsigned = await fetch(new URL(`/${cfg.s3.bucket}/${key}`, cfg.s3.endpoint));
    await unsigned.arrayBuffer();
    expect(unsigned.status).toBe(403);
  });
});

describe('OpenSearch (profile search, which npm test always starts)', () => {
  it('indexes a Japanese page with the cjk analyzer and finds it by a word from its text', async () => {
    const base = process.env.CAPTURE_LEDGER_OPENSEARCH_URL || `http://127.0.0.1:${process.env.CAPTURE_LEDGER_OPENSEARCH_PORT}`;
    const index = `stack-test-${randomBytes(4).toString('hex')}`;
    const call = async (method: string, path: string, body?: unknown) => {
      const res = await fetch(base + path, {
        method,
        headers: { 'content-type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      return { status: res.status, json: (await res.json()) as Record<string, unknown> };
    };
    const created = await call('PUT', `/${index}`, { mappings: { properties: { text: { type: 'text', analyzer: 'cjk' } } } });
    expect(created.status).toBe(200);
    cleanups.push(() => call('DELETE', `/${index}`));
    // the modules are loaded as plugins: netty4 answers HTTP, analysis-common provides cjk
    const plugins = await fetch(`${base}/_cat/plugins?format=json`).then((r) => r.json() as Promise<{ component: string }[]>);
    expect(plugins.map((p) => p.component).sort()).toEqual(['org.opensearch.analysis.common.CommonAnalysisPlugin', 'org.opensearch.transport.Netty4Plugin']);

    expect((await call('PUT', `/${index}/_doc/1?refresh=true`, { text: '東京都の天気は晴れです' })).status).toBe(201);
    expect((await call('PUT', `/${index}/_doc/2?refresh=true`, { text: 'The weather in Osaka is rainy' })).status).toBe(201);
    const hit = await call('POST', `/${index}/_search`, { query: { match_phrase: { text: '天気' } } });
    const hits = (hit.json.hits as { hits: { _id: string }[] }).hits.map((h) => h._id);
    expect(hits).toEqual(['1']);
    const miss = await call('POST', `/${index}/_search`, { query: { match_phrase: { text: '大阪' } } });
    expect((miss.json.hits as { hits: unknown[] }).hits).toEqual([]);
  });
});

describe('Postgres', () => {
  it('answers a query on the ledger database', async () => {
    const client = new pg.Client({ connectionString: cfg.databaseUrl });
    await client.connect();
    try {
      const { rows } = await client.query<{ db: string; n: number }>('SELECT current_database() AS db, 6 * 7 AS n');
      expect(rows).toEqual([{ db: new URL(cfg.databaseUrl).pathname.slice(1), n: 42 }]);
    } finally {
      await client.end();
    }
  });
});
