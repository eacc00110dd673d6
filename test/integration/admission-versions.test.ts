// Admission reads the manifest and links artifact its capture wrote, not what was put over their
// keys before the level was admitted. Any capture worker may put any key, so one taken over by a
// hostile page could rewrite another level's manifest (naming another WACZ, or links to follow)
// between that level's capture and its admission. The report names the manifest's version, the
// manifest names its artifacts' versions, and admission reads exactly those. Real Postgres and
// SeaweedFS (versioned bucket), the real object reader; no Temporal.
import { randomUUID } from 'node:crypto';
import { PutObjectCommand } from '@aws-sdk/client-s3';
import { describe, expect, it } from 'vitest';
import type { Manifest, PageReport } from '../../src/domain/contract.ts';
import { admitLevel } from '../../src/ledger/admit-level.ts';
import { upsertLevelReport } from '../../src/store/crawls.ts';
import { useAdmitDeps } from '../support/admission.ts';
import { insertTestCrawl } from '../support/crawl-rows.ts';
import { useHarness } from '../support/harness.ts';

const h = useHarness({ api: false });
const admission = useAdmitDeps(() => h);

/** Puts `body` as JSON at `key` and answers the version the bucket gave it. */
async function put(key: string, body: unknown): Promise<string> {
  const { VersionId } = await h.s3.send(new PutObjectCommand({ Bucket: h.bucket, Key: key, Body: JSON.stringify(body), ContentType: 'application/json' }));
  if (VersionId === undefined || VersionId === 'null') throw new Error(`the bucket ${h.bucket} keeps no versions`);
  return VersionId;
}

/** A seed captured with one link; then a forged manifest and links artifact put over both keys. */
async function capturedThenForged(prefix: string) {
  const taskId = randomUUID();
  const base = `${prefix}/${taskId}`;
  const at = new Date().toISOString();
  const manifest = (waczKey: string, linksVersion?: string): Manifest => ({
    taskId,
    url: 'https://a.test/',
    finalUrl: 'https://a.test/',
    status: 'succeeded',
    artifacts: [
      { format: 'wacz', bucket: h.bucket, key: waczKey, sha256: 'a'.repeat(64), size: 10 },
      { format: 'links', bucket: h.bucket, key: `${base}.links.json`, sha256: 'b'.repeat(64), size: 10, ...(linksVersion ? { versionId: linksVersion } : {}) },
    ],
    software: 'test-capturer',
    startedAt: at,
    finishedAt: at,
  });
  const linksVersion = await put(`${base}.links.json`, { url: 'https://a.test/', links: [{ href: '/captured-link' }] });
  const manifestVersion = await put(`${base}.result.json`, manifest(`${base}.wacz`, linksVersion));
  // what a hostile capture worker puts over both keys before the level is admitted
  await put(`${base}.links.json`, { url: 'https://a.test/', links: [{ href: '/forged-link' }] });
  await put(`${base}.result.json`, manifest(`${base}.forged.wacz`));
  const report: PageReport = { url: 'https://a.test/', status: 'captured', taskId, manifestKey: `${base}.result.json`, submittedAt: at, finishedAt: at };
  return { base, report, manifestVersion };
}

async function admitted(crawlId: string) {
  const archives = await h.tdb.db
    .selectFrom('archives')
    .innerJoin('crawl_pages', 'crawl_pages.task_id', 'archives.task_id')
    .select('archives.object_key')
    .where('crawl_pages.crawl_id', '=', crawlId)
    .execute();
  const next = await h.tdb.db.selectFrom('crawl_pages').select('url').where('crawl_id', '=', crawlId).where('depth', '=', 1).orderBy('url').execute();
  return { archives: archives.map((a) => a.object_key), next: next.map((p) => p.url) };
}

describe('admission of a level whose objects were put over after its capture', () => {
  it('reads the manifest version the report names and the links version the manifest names: the forged objects change nothing', async () => {
    const crawlId = await insertTestCrawl(h.tdb.db, { seeds: ['https://a.test/'], maxDepth: 1, dispatchedDepth: 0 });
    const { base, report, manifestVersion } = await capturedThenForged(`adm/${crawlId}`);
    await upsertLevelReport(h.tdb.db, crawlId, 0, { depth: 0, pages: [{ ...report, manifestVersionId: manifestVersion }] }, 'capture-flow');
    expect(await admitLevel(admission.deps, { crawlId, depth: 0, expand: true })).toMatchObject({ captured: 1, archivesCreated: 1, linksRead: 1 });
    expect(await admitted(crawlId)).toEqual({ archives: [`${base}.wacz`], next: ['https://a.test/captured-link'] });
  });

  it('a report that names no version is read as the key is now: the forgery would land (why the flow reports versions)', async () => {
    const crawlId = await insertTestCrawl(h.tdb.db, { seeds: ['https://a.test/'], maxDepth: 1, dispatchedDepth: 0 });
    const { base, report } = await capturedThenForged(`adm/${crawlId}`);
    await upsertLevelReport(h.tdb.db, crawlId, 0, { depth: 0, pages: [report] }, 'capture-flow');
    expect(await admitLevel(admission.deps, { crawlId, depth: 0, expand: true })).toMatchObject({ captured: 1, archivesCreated: 1, linksRead: 1 });
    expect(await admitted(crawlId)).toEqual({ archives: [`${base}.forged.wacz`], next: ['https://a.test/forged-link'] });
  });

  it('a version that is not the manifest key’s is not read: nothing is admitted from it', async () => {
    const crawlId = await insertTestCrawl(h.tdb.db, { seeds: ['https://a.test/'], maxDepth: 1, dispatchedDepth: 0 });
    const { report } = await capturedThenForged(`adm/${crawlId}`);
    const elsewhere = await put(`adm/${crawlId}/other.json`, {});
    await upsertLevelReport(h.tdb.db, crawlId, 0, { depth: 0, pages: [{ ...report, manifestVersionId: elsewhere }] }, 'capture-flow');
    const result = await admitLevel(admission.deps, { crawlId, depth: 0, expand: true });
    expect(result).toMatchObject({ archivesCreated: 0, linksRead: 0 });
    expect(await admitted(crawlId)).toEqual({ archives: [], next: [] });
  });
});
