// Deleting an archive, over the real stack and Chromium: a crawl of two pages captured in every
// format and indexed by the workflow, one of them shared. Deleting one takes every object its
// capture wrote out of the bucket (all versions), its pages out of the index and its tuples (the
// share too) out of OpenFGA, and leaves its neighbour's whole. And it stays deleted: the daily
// reconcile and a level admitted again register nothing for it (both did before: its
// capture_submissions row still carries the manifest key).
import { randomBytes } from 'node:crypto';
import { GetObjectCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { share } from '../../src/cli/fga-share.ts';
import { CAPTURE_SUFFIX, captureListPrefix, isCaptureObject } from '../../src/domain/capture-objects.ts';
import type { LevelReportBody } from '../../src/domain/contract.ts';
import { archiveRef } from '../../src/fga/tuples.ts';
import { admitLevel } from '../../src/ledger/admit-level.ts';
import { reconcile } from '../../src/ledger/reconcile.ts';
import { versionsUnder } from '../../src/s3/delete-versions.ts';
import { getLevelReport, upsertLevelReport } from '../../src/store/crawls.ts';
import { createSearchIndex, type SearchIndex } from '../../src/search/client.ts';
import { eventually, waitForCrawlEnd } from '../support/crawls.ts';
import { drain } from '../support/ledger.ts';
import { useLiveCrawlStack } from '../support/live-crawl.ts';

const ORG = 'tidy';
const OPENSEARCH_URL = 'http://127.0.0.1:9200';
const INDEX = `cl-test-delete-${randomBytes(4).toString('hex')}`;

const h = useLiveCrawlStack({
  org: ORG,
  env: {
    CAPTURE_LEDGER_CAPTURE_FORMATS: 'wacz,html,png,webp,mhtml,links',
    CAPTURE_LEDGER_OPENSEARCH_URL: OPENSEARCH_URL,
    CAPTURE_LEDGER_OPENSEARCH_INDEX: INDEX,
  },
  hosts: {
    site: {
      pages: {
        '/gone': '<title>Gone</title><p>a numbat forages at dusk</p>',
        '/kept': '<title>Kept</title><p>a quokka smiles at noon</p>',
      },
    },
  },
});

type Captured = { id: string; taskId: string; objectKey: string; objectVersion: string | null; manifestKey: string };
let crawlId: string;
let gone: Captured;
let kept: Captured;
let search: SearchIndex;
/** what the deleted capture wrote, to write it again */
let goneBytes: { wacz: Uint8Array; manifest: Uint8Array };

const bytesOf = async (key: string, version: string | null): Promise<Uint8Array> =>
  (await h.s3.send(new GetObjectCommand({ Bucket: h.bucket, Key: key, VersionId: version ?? undefined }))).Body!.transformToByteArray();

/** Every version of every object the capture wrote beside its manifest, as `<suffix>@<version>`. */
async function objectsOf(c: Captured): Promise<string[]> {
  const list = captureListPrefix(c.manifestKey, c.taskId)!;
  const found: string[] = [];
  for await (const page of versionsUnder(h.s3, h.bucket, list))
    for (const v of page) if (isCaptureObject(v.key, list)) found.push(`${v.key.slice(list.length)}@${v.versionId}`);
  return found.sort();
}

const suffixesOf = (objects: string[]): string[] => [...new Set(objects.map((o) => o.split('@')[0]!))].sort();

async function hitsFor(q: string): Promise<{ hits: { archiveId: string }[]; total: number }> {
  const res = await fetch(`${h.api.url}/api/search?q=${q}`, { headers: await h.as('alice', [ORG]) });
  expect(res.status).toBe(200);
  return (await res.json()) as never;
}

const documentsOf = async (archiveId: string): Promise<number> =>
  (await search.client.count({ index: INDEX, body: { query: { term: { archiveId } } } })).body.count;

const tuplesOn = async (archiveId: string) =>
  (await h.store.client.read({ object: archiveRef(archiveId) })).tuples.map((t) => `${t.key.user} ${t.key.relation}`).sort();

beforeAll(async () => {
  search = createSearchIndex({ url: OPENSEARCH_URL, index: INDEX });
  const res = await fetch(`${h.api.url}/api/crawls`, {
    method: 'POST',
    headers: await h.as('alice', [ORG]),
    body: JSON.stringify({ seeds: [h.site.url('site', '/gone'), h.site.url('site', '/kept')], maxDepth: 0, perHostDelayMs: 0 }),
  });
  expect(res.status, await res.clone().text()).toBe(202);
  crawlId = ((await res.json()) as { crawlId: string }).crawlId;
  expect(await waitForCrawlEnd(h.tdb.db, crawlId, 120_000)).toMatchObject({ state: 'succeeded' });
  const rows = await eventually(
    async () => {
      const found = await h.tdb.db
        .selectFrom('archives')
        .innerJoin('capture_submissions as s', 's.task_id', 'archives.task_id')
        .select(['archives.id', 'archives.task_id', 'archives.url', 'archives.object_key', 'archives.object_version', 'archives.indexed_at', 's.manifest_key'])
        .where('s.crawl_id', '=', crawlId)
        .execute();
      return found.length === 2 && found.every((r) => r.indexed_at !== null) ? found : undefined;
    },
    30_000,
    'two archives indexed by the workflow',
  );
  const of = (path: string): Captured => {
    const r = rows.find((x) => new URL(x.url).pathname === path)!;
    return { id: r.id, taskId: r.task_id, objectKey: r.object_key, objectVersion: r.object_version, manifestKey: r.manifest_key! };
  };
  [gone, kept] = [of('/gone'), of('/kept')];
  await drain(h.tdb.db, h.store.client);
}, 180_000);

afterAll(async () => {
  await search?.client.indices.delete({ index: INDEX }, { ignore: [404] });
  await search?.client.close();
});

describe('deleting an archive', { timeout: 60_000 }, () => {
  it('removes every object its capture wrote, its pages in the index and its tuples, share included, and leaves its neighbour’s', async () => {
    const everySuffix = Object.values(CAPTURE_SUFFIX).sort();
    expect(suffixesOf(await objectsOf(gone))).toEqual(everySuffix);
    const keptObjects = await objectsOf(kept);
    expect(suffixesOf(keptObjects)).toEqual(everySuffix);
    // a hostile capture's manifest may name another capture's WACZ as its screenshot: what the
    // ledger kept of it is not what deletion goes by
    await h.tdb.db
      .updateTable('archives')
      .set({ provenance: JSON.stringify({ manifestKey: gone.manifestKey, thumbnail: { format: 'png', bucket: h.bucket, key: kept.objectKey } }) })
      .where('id', '=', gone.id)
      .execute();
    goneBytes = {
      wacz: await bytesOf(gone.objectKey, gone.objectVersion),
      manifest: await bytesOf(
        gone.manifestKey,
        (await h.tdb.db.selectFrom('capture_submissions').select('manifest_version').where('task_id', '=', gone.taskId).executeTakeFirstOrThrow())
          .manifest_version,
      ),
    };
    await share({ db: h.tdb.db, fga: h.store.client }, gone.id, 'bob', '1d');
    expect(await tuplesOn(gone.id)).toEqual([`capture_job:${crawlId} parent`, 'user:bob viewer']);
    expect((await hitsFor('numbat')).hits.map((x) => x.archiveId)).toEqual([gone.id]);
    expect(await documentsOf(gone.id)).toBe(1);

    const { 'content-type': _json, ...bodiless } = await h.as('alice', [ORG]);
    const del = await fetch(`${h.api.url}/api/archives/${gone.id}`, { method: 'DELETE', headers: bodiless });
    expect(del.status).toBe(200);
    expect(await del.json()).toEqual({ id: gone.id, deleted: true, objectDeleted: true });

    expect(await objectsOf(gone)).toEqual([]);
    expect(await objectsOf(kept)).toEqual(keptObjects);
    const keptWacz = await h.s3.send(new GetObjectCommand({ Bucket: h.bucket, Key: kept.objectKey, VersionId: kept.objectVersion ?? undefined }));
    expect(keptWacz.ContentLength).toBeGreaterThan(0);
    // the index's raw count, too: the documents are gone, not only dropped from answers
    expect(await documentsOf(gone.id)).toBe(0);
    expect(await hitsFor('numbat')).toEqual({ hits: [], total: 0 });
    expect((await hitsFor('quokka')).hits.map((x) => x.archiveId)).toEqual([kept.id]);
    await drain(h.tdb.db, h.store.client);
    expect(await tuplesOn(gone.id)).toEqual([]);
    expect(await tuplesOn(kept.id)).toEqual([`capture_job:${crawlId} parent`]);
    for (const path of ['url', 'thumbnail-url'])
      expect((await fetch(`${h.api.url}/api/archives/${gone.id}/${path}`, { method: 'POST', headers: bodiless })).status, path).toBe(404);
    expect(await h.tdb.db.selectFrom('archive_deletions').select(['task_id', 'archive_id', 'deleted_by', 'cleanup_error']).execute()).toEqual([
      { task_id: gone.taskId, archive_id: gone.id, deleted_by: 'alice', cleanup_error: null },
    ]);
  });

  it('stays deleted: a capture tried again writes its keys anew, and neither reconcile nor the level admitted again registers its task', async () => {
    const taskArchive = () => h.tdb.db.selectFrom('archives').select('id').where('task_id', '=', gone.taskId).execute();
    expect(await taskArchive()).toEqual([]);
    // the capture tried again (a page's task id is derived from its crawl, level and URL: the
    // same keys), and the level reported again naming the new manifest
    await h.s3.send(new PutObjectCommand({ Bucket: h.bucket, Key: gone.objectKey, Body: goneBytes.wacz }));
    const put = await h.s3.send(new PutObjectCommand({ Bucket: h.bucket, Key: gone.manifestKey, Body: goneBytes.manifest, ContentType: 'application/json' }));
    const stored = (await getLevelReport(h.tdb.db, crawlId, 0))!.body as LevelReportBody;
    const pages = stored.pages.map((p) => (p.taskId === gone.taskId ? { ...p, manifestVersionId: put.VersionId! } : p));
    await upsertLevelReport(h.tdb.db, crawlId, 0, { ...stored, pages }, 'capture-flow');
    await h.tdb.db.updateTable('capture_submissions').set({ manifest_version: put.VersionId! }).where('task_id', '=', gone.taskId).execute();

    expect(await reconcile({ db: h.tdb.db, s3: h.s3, bucket: h.bucket })).toMatchObject({ pending: 0, registered: 0 });
    const again = await admitLevel({ db: h.tdb.db, s3: h.s3, bucket: h.bucket }, { crawlId, depth: 0, expand: false });
    expect(again).toMatchObject({ pages: 2, archivesCreated: 0 });
    expect(await taskArchive()).toEqual([]);
    expect(await h.tdb.db.selectFrom('archives').select('id').where('task_id', '=', kept.taskId).execute()).toEqual([{ id: kept.id }]);
  });
});
