// The local stack's secrets are this checkout's own (scripts/lib/env.mjs ensureLocalSecrets): the
// values .env.example once published open nothing in the running stack, and the database
// password is on no command line or log line another local user could read.
import { readFileSync } from 'node:fs';
import { GetObjectCommand, PutObjectCommand, S3ServiceException } from '@aws-sdk/client-s3';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../../scripts/lib/env.mjs';
import { createS3 } from '../../src/s3/client.ts';
import { testConfig } from '../support/config.ts';

const PUBLISHED_PASSWORD = 'capture_ledger';

async function connectError(url: URL): Promise<string | undefined> {
  const client = new pg.Client({ connectionString: url.href });
  try {
    await client.connect();
    return (await client.query<{ one: number }>('SELECT 1 AS one')).rows[0]?.one === 1 ? undefined : 'no row';
  } catch (err) {
    return (err as { code?: string }).code ?? String(err);
  } finally {
    await client.end().catch(() => undefined);
  }
}

async function s3Refusal(request: Promise<unknown>): Promise<number | undefined> {
  try {
    await request;
    return 200;
  } catch (err) {
    if (!(err instanceof S3ServiceException)) throw err;
    return err.$metadata.httpStatusCode;
  }
}

describe("the local stack's secrets", () => {
  it("Postgres refuses the role's once-published password and takes the generated one", async () => {
    const url = new URL(process.env.CAPTURE_LEDGER_DATABASE_URL!);
    expect(url.password).not.toBe('');
    expect(url.password).not.toBe(PUBLISHED_PASSWORD);
    expect(await connectError(url)).toBeUndefined();
    expect(await connectError(Object.assign(new URL(url), { password: PUBLISHED_PASSWORD }))).toBe('28P01');
  });

  it("OpenFGA reads its datastore URL from its environment: the password is not on its command line, nor in the stack's logs", () => {
    const password = new URL(process.env.CAPTURE_LEDGER_FGA_DATABASE_URL!).password;
    const { pid } = JSON.parse(readFileSync(`${ROOT}.stack/pids/openfga.json`, 'utf8')) as { pid: number };
    const cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
    expect(cmdline).toContain('run');
    expect(cmdline.join(' ')).not.toContain(password);
    expect(cmdline.join(' ')).not.toContain('datastore-uri');
    for (const log of ['openfga', 'fga-migrate']) expect(readFileSync(`${ROOT}.stack/logs/${log}.log`, 'utf8')).not.toContain(password);
  });

  it("SeaweedFS refuses the S3 keys .env.example once published, for the ledger's identity and the capture workers'", async () => {
    const config = testConfig({ CAPTURE_LEDGER_FGA_STORE_ID: 'x', CAPTURE_LEDGER_FGA_MODEL_ID: 'x' });
    expect(config.s3.secretAccessKey).not.toBe('capture-ledger-dev-secret');
    const key = `stack-secrets-test/${process.pid}`;
    const admin = createS3({ ...config.s3, secretAccessKey: 'capture-ledger-dev-secret' });
    const worker = createS3({ ...config.s3, accessKeyId: process.env.CAPTURE_WORKER_S3_ACCESS_KEY_ID!, secretAccessKey: 'capture-worker-dev-secret' });
    const real = createS3(config.s3);
    try {
      expect(await s3Refusal(admin.send(new GetObjectCommand({ Bucket: config.s3.bucket, Key: key })))).toBe(403);
      expect(await s3Refusal(worker.send(new PutObjectCommand({ Bucket: config.s3.bucket, Key: key, Body: 'x' })))).toBe(403);
      // the same requests with this checkout's keys get past the signature: the object is absent (404)
      expect(await s3Refusal(real.send(new GetObjectCommand({ Bucket: config.s3.bucket, Key: key })))).toBe(404);
    } finally {
      for (const c of [admin, worker, real]) c.destroy();
    }
  });
});
