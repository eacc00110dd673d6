// The lean signed-GET reader admission uses, against the real SeaweedFS (which verifies
// signatures): what it reads must be exactly what the SDK wrote, under any key.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { DeleteObjectCommand, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import type { Config } from '../../src/config/env.ts';
import { createObjectReader, encodeSegment, objectPath } from '../../src/ledger/object-reader.ts';
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

describe('createObjectReader', () => {
  it('encodes key segments the way SigV4 signs them', () => {
    expect(encodeSegment("a b!'()*~._-é")).toBe('a%20b%21%27%28%29%2A~._-%C3%A9');
    expect(objectPath('/', 'captures', 'x/y z/t.json')).toBe('/captures/x/y%20z/t.json');
  });

  it('reads what the SDK wrote, under plain and awkward keys', async () => {
    const reader = createObjectReader(config.s3);
    try {
      const base = `reader-test/${randomUUID()}`;
      const keys = [`${base}/plain.result.json`, `${base}/with space/and+plus.json`, `${base}/ünïcödé/(paren)!*'.json`, `${base}/a=b&c;d,e@f$.json`];
      for (const [i, key] of keys.entries()) {
        written.push(key);
        await s3.send(new PutObjectCommand({ Bucket: config.s3.bucket, Key: key, Body: JSON.stringify({ i, key }) }));
      }
      for (const [i, key] of keys.entries()) {
        expect(await reader.read(config.s3.bucket, key)).toEqual({ kind: 'ok', text: JSON.stringify({ i, key }) });
      }
      expect(await reader.read(config.s3.bucket, `${base}/nothing-here.json`)).toEqual({ kind: 'missing' });
    } finally {
      reader.close();
    }
  });

  it('a wrong secret or an unreachable store is unreadable, never missing', async () => {
    const key = `reader-test/${randomUUID()}.json`;
    written.push(key);
    await s3.send(new PutObjectCommand({ Bucket: config.s3.bucket, Key: key, Body: '{}' }));
    const wrong = createObjectReader({ ...config.s3, secretAccessKey: 'not-the-secret' });
    const dead = createObjectReader({ ...config.s3, endpoint: 'http://127.0.0.1:9' }, { timeoutMs: 2000 });
    try {
      const r1 = await wrong.read(config.s3.bucket, key);
      expect(r1.kind).toBe('unreadable');
      expect(r1.kind === 'unreadable' && r1.error).toMatch(/answered 403/);
      const r2 = await dead.read(config.s3.bucket, key);
      expect(r2.kind).toBe('unreadable');
    } finally {
      wrong.close();
      dead.close();
    }
  });
});
