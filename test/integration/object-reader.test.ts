// harness: not used because it tests the S3 object reader alone, against the test bucket.
// The lean signed-GET reader admission uses, against the real SeaweedFS (which verifies
// signatures): what it reads must be exactly what the SDK wrote, under any key. The signing must
// be what the SDK's own SigV4 signer produces; these tests pin that the path signed is the path sent, encoded
// once (S3 does not re-escape), so awkward keys neither 403 (signature mismatch) nor 404
// (a double-encoded key names a different object).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { DeleteObjectCommand, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { HttpRequest } from '@smithy/core/protocols';
import type { Config } from '../../src/config/env.ts';
import { createObjectReader } from '../../src/s3/object-reader.ts';
import { readObjectText } from '../../src/ledger/manifest-read.ts';
import { objectPath } from '../../src/s3/object-path.ts';
import { createS3 } from '../../src/s3/client.ts';
import { testConfig } from '../support/config.ts';

let config: Config;
let s3: S3Client;
const written: string[] = [];

beforeAll(() => {
  config = testConfig({ CAPTURE_LEDGER_FGA_STORE_ID: 'x', CAPTURE_LEDGER_FGA_MODEL_ID: 'x' });
  s3 = createS3(config.s3);
});

afterAll(async () => {
  for (const key of written) await s3.send(new DeleteObjectCommand({ Bucket: config.s3.bucket, Key: key })).catch(() => undefined);
  s3.destroy();
});

async function put(key: string, body: string): Promise<void> {
  written.push(key);
  await s3.send(new PutObjectCommand({ Bucket: config.s3.bucket, Key: key, Body: body }));
}

describe('objectPath', () => {
  it('encodes each key segment once, as the SDK encodes an S3 {Key+} label', () => {
    expect(objectPath('/', 'captures', 'x/y z/t.json')).toBe('/captures/x/y%20z/t.json');
    expect(objectPath('/', 'captures', "a+b/é/(!*')/100%.json")).toBe('/captures/a%2Bb/%C3%A9/%28%21%2A%27%29/100%25.json');
    expect(objectPath('/', 'captures', 'k~._-/a=b&c;d,e@f$.json')).toBe('/captures/k~._-/a%3Db%26c%3Bd%2Ce%40f%24.json');
    expect(objectPath('/base/', 'b', 'k')).toBe('/base/b/k');
  });
});

describe('createObjectReader', () => {
  it('sends exactly what it signed, signed as the S3 client itself signs it', async () => {
    // a listener on the wire (SeaweedFS also accepts a doubly-escaped canonical path, so it
    // cannot tell the two apart): path, headers and Authorization must be what the SDK's own S3
    // signer (s3.config.signer(), signingEscapePath false) produces for the same request
    const seen: { url: string; headers: http.IncomingHttpHeaders }[] = [];
    const server = http.createServer((req, res) => {
      seen.push({ url: req.url ?? '', headers: req.headers });
      res.writeHead(404).end();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const host = `127.0.0.1:${(server.address() as AddressInfo).port}`;
    const reader = createObjectReader({ ...config.s3, endpoint: `http://${host}` });
    try {
      const key = "x/with space/a+b/ünï/(!*')/100%.json";
      expect(await reader.read('captures', key)).toEqual({ kind: 'missing' });
      expect(seen).toHaveLength(1);
      const { url, headers } = seen[0]!;
      expect(url).toBe('/captures/x/with%20space/a%2Bb/%C3%BCn%C3%AF/%28%21%2A%27%29/100%25.json');
      expect(url).toBe(objectPath('/', 'captures', key));
      expect(Object.keys(headers).sort()).toEqual(['authorization', 'connection', 'host', 'x-amz-content-sha256', 'x-amz-date']);
      expect(headers.host).toBe(host);
      expect(headers['x-amz-content-sha256']).toBe('e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855');
      const amzDate = String(headers['x-amz-date']);
      const signingDate = new Date(amzDate.replace(/^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/, '$1-$2-$3T$4:$5:$6Z'));
      const sdkSigner = await s3.config.signer();
      const reference = await sdkSigner.sign(new HttpRequest({ method: 'GET', protocol: 'http:', hostname: '127.0.0.1', path: url, headers: { host } }), {
        signingDate,
      });
      expect(reference.headers['x-amz-date']).toBe(amzDate);
      expect(headers.authorization).toBe(reference.headers.authorization);
      expect(headers.authorization).toMatch(
        /^AWS4-HMAC-SHA256 Credential=[^/]+\/\d{8}\/[^/]+\/s3\/aws4_request, SignedHeaders=host;x-amz-content-sha256;x-amz-date, Signature=[0-9a-f]{64}$/,
      );
    } finally {
      reader.close();
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('reads what the SDK wrote, under plain and awkward keys', async () => {
    const reader = createObjectReader(config.s3);
    try {
      const base = `reader-test/${randomUUID()}`;
      const keys = [
        `${base}/plain.result.json`,
        `${base}/with space/and+plus.json`,
        `${base}/ünïcödé/日本語/(paren)!*'.json`,
        `${base}/a=b&c;d,e@f$.json`,
        `${base}/literal%20percent/100%.json`,
        `${base}/tilde~dot.dash-under_/x`,
      ];
      for (const [i, key] of keys.entries()) await put(key, JSON.stringify({ i, key }));
      for (const [i, key] of keys.entries()) {
        expect(await reader.read(config.s3.bucket, key)).toEqual({ kind: 'ok', text: JSON.stringify({ i, key }) });
      }
      // the decoded twin of the literal-percent key is a different object, and is not there
      expect(await reader.read(config.s3.bucket, `${base}/literal percent/100%.json`)).toEqual({ kind: 'missing' });
      expect(await reader.read(config.s3.bucket, `${base}/nothing-here.json`)).toEqual({ kind: 'missing' });
    } finally {
      reader.close();
    }
  });

  it('reads the version asked for, under an awkward key, whatever was put over it since', async () => {
    const reader = createObjectReader(config.s3);
    try {
      const key = `reader-test/${randomUUID()}/ünï (1)+!.result.json`;
      written.push(key);
      const versions: string[] = [];
      for (const body of ['first', 'second', 'third']) {
        const { VersionId } = await s3.send(new PutObjectCommand({ Bucket: config.s3.bucket, Key: key, Body: body }));
        versions.push(VersionId!);
      }
      expect(new Set(versions).size).toBe(3);
      expect(await reader.read(config.s3.bucket, key)).toEqual({ kind: 'ok', text: 'third' });
      for (const [i, body] of ['first', 'second', 'third'].entries())
        expect(await reader.read(config.s3.bucket, key, undefined, versions[i])).toEqual({ kind: 'ok', text: body });
      // the same read through the SDK client, as reconcile reads
      expect(await readObjectText(s3, config.s3.bucket, key, undefined, versions[0])).toEqual({ kind: 'ok', text: 'first' });
      // a version of another key is not this key's
      const other = `reader-test/${randomUUID()}.json`;
      written.push(other);
      const { VersionId: elsewhere } = await s3.send(new PutObjectCommand({ Bucket: config.s3.bucket, Key: other, Body: 'other' }));
      expect((await reader.read(config.s3.bucket, key, undefined, elsewhere)).kind).not.toBe('ok');
    } finally {
      reader.close();
    }
  });

  it('many concurrent reads over a few keep-alive sockets all come back intact', async () => {
    const reader = createObjectReader(config.s3, { maxSockets: 4 });
    try {
      const base = `reader-test/${randomUUID()}`;
      const keys = Array.from({ length: 40 }, (_, i) => `${base}/${i} é+.json`);
      await Promise.all(keys.map((key, i) => put(key, JSON.stringify({ i }))));
      const reads = await Promise.all(Array.from({ length: 200 }, (_, n) => reader.read(config.s3.bucket, keys[n % keys.length]!)));
      reads.forEach((r, n) => expect(r).toEqual({ kind: 'ok', text: JSON.stringify({ i: n % keys.length }) }));
    } finally {
      reader.close();
    }
  });

  it('a wrong secret or access key is unreadable (403), never missing, even for a key that does not exist', async () => {
    const key = `reader-test/${randomUUID()}/with space+.json`;
    await put(key, '{}');
    const wrongSecret = createObjectReader({ ...config.s3, secretAccessKey: 'not-the-secret' });
    const wrongKeyId = createObjectReader({ ...config.s3, accessKeyId: 'nobody' });
    try {
      for (const reader of [wrongSecret, wrongKeyId]) {
        for (const k of [key, `${key}.absent`]) {
          const r = await reader.read(config.s3.bucket, k);
          expect(r.kind).toBe('unreadable');
          expect(r.kind === 'unreadable' && r.error).toMatch(/answered 403/);
        }
      }
    } finally {
      wrongSecret.close();
      wrongKeyId.close();
    }
  });

  it('an unreachable store is unreadable, never missing', async () => {
    const dead = createObjectReader({ ...config.s3, endpoint: 'http://127.0.0.1:9' }, { timeoutMs: 2000 });
    try {
      const r = await dead.read(config.s3.bucket, 'reader-test/anything.json');
      expect(r.kind).toBe('unreadable');
      expect(r.kind === 'unreadable' && r.error).toMatch(/ECONNREFUSED|no answer/);
    } finally {
      dead.close();
    }
  });
});
