// npm run replay's server: ReplayWeb.page's files, and /wacz/<key> from the bucket with Range
// requests and Content-Length.
import { randomUUID } from 'node:crypto';
import { PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createS3 } from '../../src/s3/client.ts';
import { buildReplayServer, parseRange } from '../../src/replay/server.ts';
import { testConfig } from '../support/config.ts';
import { makeWacz } from '../support/ledger.ts';

let s3: S3Client;
let app: FastifyInstance;
let base: string;
let wacz: Buffer;
const key = `replay-test/${randomUUID()}/a page.wacz`;
const path = `/wacz/${key.split('/').map(encodeURIComponent).join('/')}`;

beforeAll(async () => {
  const config = testConfig({ CAPTURE_LEDGER_FGA_STORE_ID: 'unused', CAPTURE_LEDGER_FGA_MODEL_ID: 'unused' });
  s3 = createS3(config.s3);
  wacz = await makeWacz('https://example.test/replay', 'replay page');
  await s3.send(new PutObjectCommand({ Bucket: config.s3.bucket, Key: key, Body: wacz }));
  app = await buildReplayServer({ s3, bucket: config.s3.bucket });
  base = await app.listen({ host: '127.0.0.1', port: 0 });
});

afterAll(async () => {
  await app?.close();
  s3?.destroy();
});

describe('replay server', () => {
  it('serves ReplayWeb.page (index, ui.js, sw.js with a root scope) and nothing else of the package', async () => {
    const index = await fetch(`${base}/?source=/wacz/x.wacz`);
    expect(index.status).toBe(200);
    expect(await index.text()).toContain('<replay-app-main>');
    const ui = await fetch(`${base}/ui.js`);
    expect(ui.status).toBe(200);
    expect(ui.headers.get('content-type')).toContain('javascript');
    const sw = await fetch(`${base}/sw.js`);
    expect(sw.status).toBe(200);
    expect(sw.headers.get('service-worker-allowed')).toBe('/');
    expect((await fetch(`${base}/package.json`)).status).toBe(404);
    expect((await fetch(`${base}/dist/index.js`)).status).toBe(404);
  });

  it('serves the whole object with Content-Length and Accept-Ranges', async () => {
    const res = await fetch(`${base}${path}`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-length')).toBe(String(wacz.length));
    expect(res.headers.get('accept-ranges')).toBe('bytes');
    expect(res.headers.get('content-type')).toBe('application/wacz');
    expect(Buffer.from(await res.arrayBuffer()).equals(wacz)).toBe(true);
  });

  it('answers a Range request with 206, Content-Range and exactly those bytes', async () => {
    for (const [range, start, end] of [
      ['bytes=0-3', 0, 3],
      ['bytes=10-', 10, wacz.length - 1],
      ['bytes=-22', wacz.length - 22, wacz.length - 1],
      [`bytes=5-${wacz.length + 100}`, 5, wacz.length - 1],
    ] as const) {
      const res = await fetch(`${base}${path}`, { headers: { range } });
      expect(res.status, range).toBe(206);
      expect(res.headers.get('content-range')).toBe(`bytes ${start}-${end}/${wacz.length}`);
      expect(res.headers.get('content-length')).toBe(String(end - start + 1));
      expect(Buffer.from(await res.arrayBuffer()).equals(wacz.subarray(start, end + 1))).toBe(true);
    }
  });

  it('416 for an unsatisfiable range; HEAD gives the length without a body', async () => {
    const res = await fetch(`${base}${path}`, { headers: { range: `bytes=${wacz.length}-` } });
    expect(res.status).toBe(416);
    expect(res.headers.get('content-range')).toBe(`bytes */${wacz.length}`);
    const head = await fetch(`${base}${path}`, { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(head.headers.get('content-length')).toBe(String(wacz.length));
  });

  it('404 for a missing key and for path tricks', async () => {
    expect((await fetch(`${base}/wacz/nope/${randomUUID()}.wacz`)).status).toBe(404);
    expect((await fetch(`${base}/wacz/a/%2E%2E/b.wacz`)).status).toBe(404);
  });
});

describe('parseRange', () => {
  it.each([
    [undefined, 100, 'all'],
    ['bytes=0-0', 100, { start: 0, end: 0 }],
    ['bytes=99-', 100, { start: 99, end: 99 }],
    ['bytes=-200', 100, { start: 0, end: 99 }],
    ['bytes=100-', 100, null],
    ['bytes=5-4', 100, null],
    ['bytes=-0', 100, null],
    ['bytes=0-1,5-6', 100, 'all'],
    ['items=0-1', 100, 'all'],
  ] as const)('%s of %i → %j', (header, size, expected) => {
    expect(parseRange(header, size)).toEqual(expected);
  });
});
