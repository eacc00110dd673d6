// harness: not used because it tests SeaweedFS's identities alone: which key may do what to the bucket.
// The capture workers' S3 identity (issue 25, least privilege), against the real SeaweedFS that
// stack:up configured: it may put objects in the captures bucket and do nothing else. Each
// refusal is SeaweedFS's own 403, and what it refused is checked with the ledger's admin key:
// the object is still there, unchanged, and nothing landed in the other bucket.
import { randomUUID } from 'node:crypto';
import {
  CopyObjectCommand,
  CreateBucketCommand,
  DeleteBucketCommand,
  DeleteObjectCommand,
  DeleteObjectsCommand,
  GetObjectCommand,
  HeadObjectCommand,
  ListBucketsCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  S3ServiceException,
  type S3Client,
} from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Config } from '../../src/config/env.ts';
import { createS3 } from '../../src/s3/client.ts';
import { testConfig } from '../support/config.ts';

let config: Config;
let admin: S3Client;
let worker: S3Client;
const prefix = `capture-identity-test/${randomUUID()}`;
const otherBucket = `capture-identity-test-${randomUUID().slice(0, 8)}`;
const body = Buffer.from('a WACZ, say');

beforeAll(async () => {
  config = testConfig({ CAPTURE_LEDGER_FGA_STORE_ID: 'x', CAPTURE_LEDGER_FGA_MODEL_ID: 'x' });
  admin = createS3(config.s3);
  const accessKeyId = process.env.CAPTURE_WORKER_S3_ACCESS_KEY_ID;
  const secretAccessKey = process.env.CAPTURE_WORKER_S3_SECRET_ACCESS_KEY;
  if (!accessKeyId || !secretAccessKey)
    throw new Error('CAPTURE_WORKER_S3_ACCESS_KEY_ID and CAPTURE_WORKER_S3_SECRET_ACCESS_KEY are not set (.env.example declares them)');
  worker = createS3({ ...config.s3, accessKeyId, secretAccessKey });
  await admin.send(new CreateBucketCommand({ Bucket: otherBucket }));
});

afterAll(async () => {
  const listed = await admin.send(new ListObjectsV2Command({ Bucket: config.s3.bucket, Prefix: prefix })).catch(() => undefined);
  for (const o of listed?.Contents ?? []) await admin.send(new DeleteObjectCommand({ Bucket: config.s3.bucket, Key: o.Key! })).catch(() => undefined);
  await admin?.send(new DeleteBucketCommand({ Bucket: otherBucket })).catch(() => undefined);
  admin?.destroy();
  worker?.destroy();
});

/** The HTTP status and S3 error code a request was refused with (it must be refused). */
async function refusal(request: Promise<unknown>): Promise<{ status: number | undefined; code: string }> {
  try {
    await request;
  } catch (err) {
    if (!(err instanceof S3ServiceException)) throw err;
    return { status: err.$metadata.httpStatusCode, code: err.name };
  }
  throw new Error('the request was allowed');
}

const ACCESS_DENIED = { status: 403, code: 'AccessDenied' };

async function adminRead(key: string): Promise<Buffer> {
  const r = await admin.send(new GetObjectCommand({ Bucket: config.s3.bucket, Key: key }));
  return Buffer.from(await r.Body!.transformToByteArray());
}

/** An object the worker wrote, read back with the admin key. */
async function workerWrote(name: string): Promise<string> {
  const key = `${prefix}/${name}`;
  const put = await worker.send(
    new PutObjectCommand({ Bucket: config.s3.bucket, Key: key, Body: body, ContentType: 'application/wacz', ContentLength: body.length }),
  );
  expect(put.$metadata.httpStatusCode).toBe(200);
  return key;
}

describe('the capture workers’ S3 identity', { timeout: 60_000 }, () => {
  it('puts objects in the captures bucket', async () => {
    const key = await workerWrote('page.wacz');
    expect(await adminRead(key)).toEqual(body);
  });

  it('cannot read what is in the bucket: GET and HEAD are refused', async () => {
    const key = await workerWrote('read.wacz');
    expect(await refusal(worker.send(new GetObjectCommand({ Bucket: config.s3.bucket, Key: key })))).toEqual(ACCESS_DENIED);
    // a HEAD answer has no body, so no error code: the status is the refusal
    expect((await refusal(worker.send(new HeadObjectCommand({ Bucket: config.s3.bucket, Key: key })))).status).toBe(403);
  });

  it('cannot list the bucket, nor see it among the buckets', async () => {
    await workerWrote('list.wacz');
    expect(await refusal(worker.send(new ListObjectsV2Command({ Bucket: config.s3.bucket, Prefix: prefix })))).toEqual(ACCESS_DENIED);
    const buckets = await worker.send(new ListBucketsCommand({})).then(
      (r) => (r.Buckets ?? []).map((b) => b.Name),
      (err: unknown) => (err instanceof S3ServiceException && err.$metadata.httpStatusCode === 403 ? [] : Promise.reject(err)),
    );
    expect(buckets).not.toContain(config.s3.bucket);
  });

  it('cannot delete: DELETE and a batch delete are refused and the object is still there', async () => {
    const key = await workerWrote('delete.wacz');
    expect(await refusal(worker.send(new DeleteObjectCommand({ Bucket: config.s3.bucket, Key: key })))).toEqual(ACCESS_DENIED);
    // a batch delete is authorised key by key, in its answer
    const batch = await worker.send(new DeleteObjectsCommand({ Bucket: config.s3.bucket, Delete: { Objects: [{ Key: key }] } })).then(
      (r) => ({ deleted: (r.Deleted ?? []).map((d) => d.Key), errors: (r.Errors ?? []).map((e) => e.Code) }),
      async (err: unknown) => ({ deleted: [], errors: [(await refusal(Promise.reject(err))).code] }),
    );
    expect(batch).toEqual({ deleted: [], errors: ['AccessDenied'] });
    expect(await adminRead(key)).toEqual(body);
  });

  it('cannot copy an object it may not read into one it may write', async () => {
    const secret = `${prefix}/another-tenant.wacz`;
    await admin.send(new PutObjectCommand({ Bucket: config.s3.bucket, Key: secret, Body: 'not the worker’s' }));
    const copy = `${prefix}/copied.wacz`;
    expect(
      (await refusal(worker.send(new CopyObjectCommand({ Bucket: config.s3.bucket, Key: copy, CopySource: `${config.s3.bucket}/${secret}` })))).status,
    ).toBe(403);
    expect((await refusal(admin.send(new HeadObjectCommand({ Bucket: config.s3.bucket, Key: copy })))).status).toBe(404);
  });

  it('cannot put objects in another bucket', async () => {
    const key = `${prefix}/elsewhere.wacz`;
    expect(await refusal(worker.send(new PutObjectCommand({ Bucket: otherBucket, Key: key, Body: body, ContentLength: body.length })))).toEqual(ACCESS_DENIED);
    const listed = await admin.send(new ListObjectsV2Command({ Bucket: otherBucket }));
    expect(listed.KeyCount ?? 0).toBe(0);
  });
});
