// npm run replay's server: ReplayWeb.page's files, and /wacz/<key>?<signature>, a proxy to the
// configured bucket that only a presigned read gets through (issue 12, deliver 7): Range requests
// and Content-Length as ReplayWeb.page needs them, .wacz only, nosniff on everything, and the
// whole chain with the API — can_view decides who gets a signature, knowing a key is not enough.
import { randomUUID } from 'node:crypto';
import { request } from 'node:http';
import { createServer, type Server } from 'node:net';
import { PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { beforeAll, describe, expect, it } from 'vitest';
import type { Config } from '../../src/config/env.ts';
import { createUrlSigner, type UrlSigner } from '../../src/api/presign.ts';
import { replayLink } from '../../src/api/picker.ts';
import { checkSource } from '../../src/replay/server.ts';
import { devHeaders } from '../support/api.ts';
import { useHarness } from '../support/harness.ts';
import { drain, insertArchive, insertJob, makeWacz } from '../support/ledger.ts';

// the API links to the replay server (CAPTURE_LEDGER_REPLAY_URL)
const h = useHarness({ replay: true });
let config: Config;
let s3: S3Client;
let sign: UrlSigner;
let base: string;
let wacz: Buffer;
const key = `replay-test/${randomUUID()}/a page.wacz`;
const otherKey = `replay-test/${randomUUID()}/other.wacz`;
const htmlKey = `replay-test/${randomUUID()}/evil.html`;
const encodedPath = (k: string) => `/wacz/${k.split('/').map(encodeURIComponent).join('/')}`;

/** GET `path` exactly as written, with no URL normalisation on the way. */
function rawStatus(path: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(`${base}/`, { path }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on('error', reject);
    req.end();
  });
}

/** The replay path for a presigned URL of `k`: what the picker hands replay as its source. */
async function signedPath(k: string, signFor = k): Promise<string> {
  return `${encodedPath(k)}${new URL(await sign(config.s3.bucket, signFor, 300)).search}`;
}

beforeAll(async () => {
  config = h.config;
  s3 = h.s3;
  base = h.replay.url;
  sign = createUrlSigner(config.s3);
  wacz = await makeWacz('https://example.test/replay', 'replay page');
  for (const [k, body, type] of [
    [key, wacz, 'application/wacz'],
    [otherKey, wacz, 'application/wacz'],
    [htmlKey, Buffer.from('<script>alert(document.domain)</script>'), 'text/html'],
  ] as const) {
    await s3.send(new PutObjectCommand({ Bucket: config.s3.bucket, Key: k, Body: body, ContentType: type }));
  }
});

describe('replay server', () => {
  it('serves ReplayWeb.page (index, ui.js, sw.js with a root scope) and nothing else of the package, all with nosniff', async () => {
    const index = await fetch(`${base}/?source=/wacz/x.wacz`);
    expect(index.status).toBe(200);
    expect(await index.text()).toContain('<replay-app-main>');
    expect(index.headers.get('x-content-type-options')).toBe('nosniff');
    const ui = await fetch(`${base}/ui.js`);
    expect(ui.status).toBe(200);
    expect(ui.headers.get('content-type')).toContain('javascript');
    expect(ui.headers.get('x-content-type-options')).toBe('nosniff');
    const sw = await fetch(`${base}/sw.js`);
    expect(sw.status).toBe(200);
    expect(sw.headers.get('service-worker-allowed')).toBe('/');
    expect((await fetch(`${base}/package.json`)).status).toBe(404);
    expect((await fetch(`${base}/dist/index.js`)).status).toBe(404);
  });

  it('a signed source: the whole object with Content-Length, Accept-Ranges, application/wacz and nosniff', async () => {
    const res = await fetch(`${base}${await signedPath(key)}`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-length')).toBe(String(wacz.length));
    expect(res.headers.get('accept-ranges')).toBe('bytes');
    expect(res.headers.get('content-type')).toBe('application/wacz');
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    expect(Buffer.from(await res.arrayBuffer()).equals(wacz)).toBe(true);
  });

  it('answers a Range request with 206, Content-Range and exactly those bytes', async () => {
    const path = await signedPath(key);
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
    const path = await signedPath(key);
    const res = await fetch(`${base}${path}`, { headers: { range: `bytes=${wacz.length}-` } });
    expect(res.status).toBe(416);
    expect(res.headers.get('content-range')).toBe(`bytes */${wacz.length}`);
    const head = await fetch(`${base}${path}`, { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(head.headers.get('content-length')).toBe(String(wacz.length));
  });

  it('knowing a key is not enough: no signature, a signature for another key, or a tampered one is 403', async () => {
    const unsigned = await fetch(`${base}${encodedPath(key)}`);
    expect(unsigned.status).toBe(403);
    expect(((await unsigned.json()) as { error: string }).error).toContain('signed source is required');
    // a signature the API gave for otherKey, presented for key
    const borrowed = await fetch(`${base}${await signedPath(key, otherKey)}`);
    expect(borrowed.status).toBe(403);
    expect(await borrowed.text()).not.toContain('replay page');
    // a longer expiry written in by hand
    const tampered = (await signedPath(key)).replace('X-Amz-Expires=300', 'X-Amz-Expires=604800');
    expect((await fetch(`${base}${tampered}`)).status).toBe(403);
  });

  it('serves .wacz only: another object is 404 even with a valid signature, and never with its stored type', async () => {
    const res = await fetch(`${base}${await signedPath(htmlKey)}`);
    expect(res.status).toBe(404);
    expect(res.headers.get('content-type')).not.toContain('html');
    expect(await res.text()).not.toContain('<script>');
    // a response-content-type override is not passed on: the archive stays application/wacz
    const override = await fetch(`${base}${await signedPath(key)}&response-content-type=text%2Fhtml`);
    expect(override.status).toBe(200);
    expect(override.headers.get('content-type')).toBe('application/wacz');
  });

  it('is not an open proxy: a key that names another host reaches only the configured bucket', async () => {
    const connections: string[] = [];
    const listener: Server = createServer((sock) => {
      connections.push(String(sock.remoteAddress));
      sock.destroy();
    });
    await new Promise<void>((r) => listener.listen(0, '127.0.0.1', r));
    const { port } = listener.address() as { port: number };
    try {
      for (const path of [
        `/wacz/${encodeURIComponent(`http://127.0.0.1:${port}/x.wacz`)}?X-Amz-Signature=0`,
        `/wacz/%2F%2F127.0.0.1:${port}%2Fx.wacz?X-Amz-Signature=0`,
        `/wacz/a/%2E%2E/%2E%2E/other-bucket/x.wacz?X-Amz-Signature=0`,
      ]) {
        const res = await fetch(`${base}${path}`);
        expect([403, 404], path).toContain(res.status);
      }
      expect(connections).toEqual([]);
    } finally {
      await new Promise<void>((r) => listener.close(() => r()));
    }
  });

  it('a missing key is refused (the bucket may say 403 rather than 404), and path tricks are 404', async () => {
    const missing = await fetch(`${base}${await signedPath(`nope/${randomUUID()}.wacz`)}`);
    expect([403, 404]).toContain(missing.status);
    expect(missing.headers.get('content-type')).toContain('application/json');
    // sent as written (fetch's URL parser would resolve the dot segments before sending)
    for (const path of ['/wacz/a/%2E%2E/b.wacz?X-Amz-Signature=0', '/wacz/a/../../b.wacz?X-Amz-Signature=0', '/wacz/./b.wacz?X-Amz-Signature=0']) {
      expect(await rawStatus(path), path).toBe(404);
    }
  });
});

describe('with the API: can_view decides who gets a signed source', () => {
  it("a member opens the organization's archive; an outsider gets no signature, and the key alone is refused", async () => {
    const crawlId = await insertJob(h.tdb.db, { orgId: 'acme', submittedBy: 'alice' });
    const archive = await insertArchive(h.tdb.db, { crawlId, bucket: config.s3.bucket, objectKey: key });
    await drain(h.tdb.db, h.store.client);

    const signFor = (who: string, orgs: string[]) => fetch(`${h.api.url}/api/archives/${archive.id}/url`, { method: 'POST', headers: devHeaders(who, orgs) });
    const member = await signFor('bob', ['acme']);
    expect(member.status).toBe(200);
    const { url } = (await member.json()) as { url: string };
    const source = new URL(replayLink(base, archive.object_key, url)).searchParams.get('source')!;
    const read = await fetch(`${base}${source}`, { headers: { range: 'bytes=0-1' } });
    expect(read.status).toBe(206);
    expect(Buffer.from(await read.arrayBuffer()).toString('latin1')).toBe('PK');

    const outsider = await signFor('mallory', ['globex']);
    expect(outsider.status).toBe(404);
    expect((await fetch(`${base}${encodedPath(archive.object_key)}`)).status).toBe(403);
  });
});

describe('checkSource', () => {
  it('decodes the key, keeps only the signature parameters, and refuses what is not a signed .wacz', () => {
    expect(checkSource('a%20b/c.wacz', 'X-Amz-Signature=ab&X-Amz-Date=1&response-content-type=text%2Fhtml')).toEqual({
      ok: true,
      key: 'a b/c.wacz',
      query: 'X-Amz-Signature=ab&X-Amz-Date=1',
    });
    // the version an archive is pinned to is part of what is signed: it is forwarded with the signature
    expect(checkSource('a/c.wacz', 'versionId=6710efb3&X-Amz-Signature=ab&versionid=x')).toEqual({
      ok: true,
      key: 'a/c.wacz',
      query: 'versionId=6710efb3&X-Amz-Signature=ab',
    });
    expect(checkSource('a/c.wacz', '')).toMatchObject({ ok: false, status: 403 });
    expect(checkSource('a/c.html', 'X-Amz-Signature=ab')).toMatchObject({ ok: false, status: 404 });
    expect(checkSource('a/%2E%2E/c.wacz', 'X-Amz-Signature=ab')).toMatchObject({ ok: false, status: 404 });
    expect(checkSource('a//c.wacz', 'X-Amz-Signature=ab')).toMatchObject({ ok: false, status: 404 });
    expect(checkSource('a/%E0%A4%A.wacz', 'X-Amz-Signature=ab')).toMatchObject({ ok: false, status: 400 });
  });
});
