// An admitted archive is the bytes its capture wrote, whatever is put over its key afterwards.
// Capture workers share one S3 identity that may put any key in the bucket (SeaweedFS cannot
// scope it to a level's prefix), so a worker taken over by a hostile page could overwrite another
// crawl's WACZ. The bucket keeps versions, the capture reports the version it wrote, and the
// ledger signs, replays, indexes and deletes that version only. Real crawl, real flow and
// Chromium, real SeaweedFS; the overwrite is made with the capture workers' own key.
import { createHash, randomUUID } from 'node:crypto';
import {
  CreateBucketCommand,
  DeleteBucketCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  ListObjectVersionsCommand,
  PutBucketVersioningCommand,
  PutObjectCommand,
  type S3Client,
} from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LevelReportBody, PageReport } from '../../src/domain/contract.ts';
import { deleteArchive } from '../../src/ledger/delete-archive.ts';
import { getLevelReport } from '../../src/store/crawls.ts';
import { readArchivePages } from '../../src/search/indexer.ts';
import { createS3 } from '../../src/s3/client.ts';
import { waitForCrawlEnd } from '../support/crawls.ts';
import { useLiveCrawlStack } from '../support/live-crawl.ts';

const ORG = 'acme';
const TITLE = 'The page as it was captured';

const h = useLiveCrawlStack({
  org: ORG,
  replay: true,
  hosts: { a: { pages: { '/': `<title>${TITLE}</title><p>captured text</p>` } } },
});

let worker: S3Client;
let archive: { id: string; object_key: string; object_version: string | null; sha256: string | null; size: number | null };
let reported: PageReport;

const sha256 = (b: Uint8Array): string => createHash('sha256').update(b).digest('hex');

async function versionsOf(key: string, bucket = h.bucket): Promise<{ versions: string[]; markers: number }> {
  const listed = await h.s3.send(new ListObjectVersionsCommand({ Bucket: bucket, Prefix: key }));
  return {
    versions: (listed.Versions ?? []).filter((v) => v.Key === key).map((v) => v.VersionId!),
    markers: (listed.DeleteMarkers ?? []).filter((m) => m.Key === key).length,
  };
}

async function signedUrl(id: string): Promise<{ status: number; url: string }> {
  const res = await fetch(`${h.api.url}/api/archives/${id}/url`, { method: 'POST', headers: await h.as('alice', [ORG]), body: '{}' });
  const body = (await res.json()) as { url: string };
  return { status: res.status, url: body.url };
}

beforeAll(async () => {
  const accessKeyId = process.env.CAPTURE_WORKER_S3_ACCESS_KEY_ID;
  const secretAccessKey = process.env.CAPTURE_WORKER_S3_SECRET_ACCESS_KEY;
  if (!accessKeyId || !secretAccessKey) throw new Error('CAPTURE_WORKER_S3_ACCESS_KEY_ID and CAPTURE_WORKER_S3_SECRET_ACCESS_KEY are not set');
  worker = createS3({ ...h.config.s3, accessKeyId, secretAccessKey });
  const res = await fetch(`${h.api.url}/api/crawls`, {
    method: 'POST',
    headers: await h.as('alice', [ORG]),
    body: JSON.stringify({ seeds: [h.site.url('a', '/')], maxDepth: 0 }),
  });
  expect(res.status).toBe(202);
  const { crawlId } = (await res.json()) as { crawlId: string };
  expect(await waitForCrawlEnd(h.tdb.db, crawlId, 90_000)).toMatchObject({ state: 'succeeded' });
  archive = await h.tdb.db
    .selectFrom('archives')
    .innerJoin('crawl_pages', 'crawl_pages.task_id', 'archives.task_id')
    .select(['archives.id', 'archives.object_key', 'archives.object_version', 'archives.sha256', 'archives.size'])
    .where('crawl_pages.crawl_id', '=', crawlId)
    .executeTakeFirstOrThrow();
  reported = ((await getLevelReport(h.tdb.db, crawlId, 0))!.body as LevelReportBody).pages[0]!;
}, 120_000);

afterAll(() => worker?.destroy());

describe('an archive pinned to the version its capture wrote', { timeout: 60_000 }, () => {
  it('the flow reported the manifest’s version, the manifest its WACZ’s, and the ledger kept it: the one version of the key, with the bytes the row names', async () => {
    expect(await versionsOf(reported.manifestKey!)).toEqual({ versions: [reported.manifestVersionId], markers: 0 });
    expect(archive.object_version).toMatch(/^\S+$/);
    expect(await versionsOf(archive.object_key)).toEqual({ versions: [archive.object_version], markers: 0 });
    const stored = await h.s3.send(new GetObjectCommand({ Bucket: h.bucket, Key: archive.object_key, VersionId: archive.object_version! }));
    const bytes = await stored.Body!.transformToByteArray();
    expect(sha256(bytes)).toBe(archive.sha256);
    expect(bytes.length).toBe(archive.size);
  });

  it('a capture worker that puts other bytes over the key changes nothing the ledger hands out: signed URL, replay, index; deleting removes every version', async () => {
    const forged = Buffer.from('PK\u0003\u0004 not the archive that was admitted');
    const put = await worker.send(new PutObjectCommand({ Bucket: h.bucket, Key: archive.object_key, Body: forged }));
    expect(put.VersionId).toBeDefined();
    expect(put.VersionId).not.toBe(archive.object_version);
    // the attack lands: the key as it is now is the forged object
    const latest = await h.s3.send(new GetObjectCommand({ Bucket: h.bucket, Key: archive.object_key }));
    expect(Buffer.from(await latest.Body!.transformToByteArray())).toEqual(forged);

    // the signed URL is of the admitted version: its bytes are the row's sha256
    const signed = await signedUrl(archive.id);
    expect(signed.status).toBe(200);
    expect(new URL(signed.url).searchParams.get('versionId')).toBe(archive.object_version);
    const direct = await fetch(signed.url);
    expect(direct.status).toBe(200);
    expect(sha256(new Uint8Array(await direct.arrayBuffer()))).toBe(archive.sha256);

    // replay forwards the version with the signature (the picker opens /wacz/<key>?<signed query>)
    const path = `/wacz/${archive.object_key.split('/').map(encodeURIComponent).join('/')}${new URL(signed.url).search}`;
    const replayed = await fetch(`${h.replay.url}${path}`);
    expect(replayed.status).toBe(200);
    expect(sha256(new Uint8Array(await replayed.arrayBuffer()))).toBe(archive.sha256);
    // the version is signed: another one in its place is refused by S3
    const swapped = path.replace(encodeURIComponent(archive.object_version!), encodeURIComponent(put.VersionId!));
    expect(swapped).not.toBe(path);
    expect((await fetch(`${h.replay.url}${swapped}`)).status).toBe(403);

    // the indexer reads the admitted version's pages
    const pages = await readArchivePages(h.s3, h.bucket, archive.object_key, archive.object_version);
    expect(pages.pages.map((p) => p.title)).toEqual([TITLE]);

    // deleting the archive deletes the key's every version, the forged one too
    const { 'content-type': _json, ...bodiless } = await h.as('alice', [ORG]);
    const del = await fetch(`${h.api.url}/api/archives/${archive.id}`, { method: 'DELETE', headers: bodiless });
    expect(del.status).toBe(200);
    expect(await del.json()).toEqual({ id: archive.id, deleted: true, objectDeleted: true });
    expect(await versionsOf(archive.object_key)).toEqual({ versions: [], markers: 0 });
    expect((await fetch(signed.url)).status).toBe(404);
  });

  it('deleting an archive whose object was put before the bucket kept versions removes that one too (version "null"), and leaves longer keys alone', async () => {
    const bucket = `archive-version-${randomUUID().slice(0, 8)}`;
    const key = `old/${randomUUID()}.wacz`;
    await h.s3.send(new CreateBucketCommand({ Bucket: bucket }));
    await h.s3.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: 'put before versioning' }));
    await h.s3.send(new PutObjectCommand({ Bucket: bucket, Key: `${key}.bak`, Body: 'another key' }));
    await h.s3.send(new PutBucketVersioningCommand({ Bucket: bucket, VersioningConfiguration: { Status: 'Enabled' } }));
    const later = await h.s3.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: 'put after' }));
    expect(await versionsOf(key, bucket)).toEqual({ versions: [later.VersionId, 'null'], markers: 0 });
    const row = await h.tdb.db
      .insertInto('archives')
      .values({ task_id: randomUUID(), bucket, object_key: key, url: 'https://old.test/', captured_at: new Date(), provenance: {} })
      .returning('id')
      .executeTakeFirstOrThrow();
    expect(await deleteArchive({ db: h.tdb.db, s3: h.s3 }, row.id, 'alice')).toEqual({ kind: 'deleted', objectDeleted: true });
    expect(await versionsOf(key, bucket)).toEqual({ versions: [], markers: 0 });
    expect((await versionsOf(`${key}.bak`, bucket)).versions).toEqual(['null']);
    await h.s3.send(new DeleteObjectCommand({ Bucket: bucket, Key: `${key}.bak`, VersionId: 'null' }));
    await h.s3.send(new DeleteBucketCommand({ Bucket: bucket }));
  });
});
