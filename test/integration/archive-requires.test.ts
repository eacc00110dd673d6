// The ledger's edges between archives (migration 0012), on a real database, as admission and
// reconcile register them (registerCaptures): an edge named before its archive arrives is resolved
// when it does (reconcile may register a dependent first), an edge never reaches another crawl's
// (so another organization's) archive, and an archive another requires is not deleted.
import { beforeAll, describe, expect, it } from 'vitest';
import type { S3Client } from '@aws-sdk/client-s3';
import type { ArchiveRecord } from '../../src/domain/admission.ts';
import { deleteArchive } from '../../src/ledger/delete-archive.ts';
import { recordSubmissions, registerCaptures } from '../../src/ledger/register.ts';
import { archivesRequiring, requiredArchives } from '../../src/store/archive-requires.ts';
import { insertTestCrawl } from '../support/crawl-rows.ts';
import type { TestDatabase } from '../support/db.ts';
import { useHarness } from '../support/harness.ts';

const h = useHarness({ api: false });
let tdb: TestDatabase;
let s3: S3Client;

beforeAll(() => {
  ({ tdb, s3 } = h);
});

const crawl = (orgId: string): Promise<string> => insertTestCrawl(tdb.db, { orgId });

const archive = (crawlId: string, name: string, requires: string[] = []): ArchiveRecord => ({
  taskId: `${crawlId}-${name}`,
  bucket: 'captures',
  objectKey: `${crawlId}/${name}.wacz`,
  url: `https://a.test/${name}`,
  finalUrl: null,
  sha256: null,
  size: null,
  capturedAt: new Date().toISOString(),
  provenance: {},
  ...(requires.length > 0 ? { requires } : {}),
});

/** As admission does: the submissions, then the archives, in one transaction. */
async function register(crawlId: string, orgId: string, records: ArchiveRecord[]): Promise<Map<string, string>> {
  const regs = await tdb.db.transaction().execute(async (trx) => {
    await recordSubmissions(
      trx,
      records.map((a) => ({
        taskId: a.taskId,
        orgId,
        submittedBy: 'alice',
        crawlId,
        url: a.url,
        manifestKey: a.objectKey.replace(/\.wacz$/, '.result.json'),
        manifestVersion: null,
        manifestError: null,
      })),
    );
    return registerCaptures(
      trx,
      records.map((a) => ({ archive: a, crawlId })),
    );
  });
  return new Map(regs.map((r) => [r.taskId, r.archiveId]));
}

describe('archive_requires', () => {
  it('a dependent registered before the archive it requires (reconcile order) is resolved when that archive arrives', async () => {
    const c = await crawl('acme');
    const seed = archive(c, 'seed');
    const page = archive(c, 'page', [seed.objectKey]);
    const pageId = (await register(c, 'acme', [page])).get(page.taskId)!;
    expect(await requiredArchives(tdb.db, pageId)).toEqual({ found: [], unresolved: 1 });
    const seedId = (await register(c, 'acme', [seed])).get(seed.taskId)!;
    expect(await requiredArchives(tdb.db, pageId)).toEqual({
      found: [{ id: seedId, bucket: 'captures', objectKey: seed.objectKey, objectVersion: null }],
      unresolved: 0,
    });
    expect(await archivesRequiring(tdb.db, seedId)).toEqual([{ id: pageId, url: page.url, objectKey: page.objectKey }]);
    // registered again (a repeated admission): no second edge
    await register(c, 'acme', [page, seed]);
    expect((await tdb.db.selectFrom('archive_requires').selectAll().where('archive_id', '=', pageId).execute()).length).toBe(1);

    expect(await deleteArchive({ db: tdb.db, s3 }, seedId, 'alice')).toEqual({
      kind: 'required',
      by: [{ id: pageId, url: page.url, objectKey: page.objectKey }],
    });
    expect((await deleteArchive({ db: tdb.db, s3 }, pageId, 'alice')).kind).toBe('deleted');
    // the dependent's edges went with it
    expect(await archivesRequiring(tdb.db, seedId)).toEqual([]);
    expect((await deleteArchive({ db: tdb.db, s3 }, seedId, 'alice')).kind).toBe('deleted');
    expect(await deleteArchive({ db: tdb.db, s3 }, seedId, 'alice')).toEqual({ kind: 'missing' });
  });

  it("an edge naming another crawl's archive (another organization's) is never resolved and pins nothing", async () => {
    const theirs = await crawl('globex');
    const victim = archive(theirs, 'victim');
    const victimId = (await register(theirs, 'globex', [victim])).get(victim.taskId)!;
    const ours = await crawl('acme');
    const forged = archive(ours, 'forged', [victim.objectKey]);
    const forgedId = (await register(ours, 'acme', [forged])).get(forged.taskId)!;
    expect(await requiredArchives(tdb.db, forgedId)).toEqual({ found: [], unresolved: 1 });
    expect(await archivesRequiring(tdb.db, victimId)).toEqual([]);
    expect((await deleteArchive({ db: tdb.db, s3 }, victimId, 'alice')).kind).toBe('deleted');
  });

  it('a manifest naming its own key requires nothing', async () => {
    const c = await crawl('acme');
    const self = archive(c, 'self');
    const id = (await register(c, 'acme', [{ ...self, requires: [self.objectKey] }])).get(self.taskId)!;
    // dropped (archiveFromManifest drops it too): a self-edge would make the archive undeletable
    expect(await requiredArchives(tdb.db, id)).toEqual({ found: [], unresolved: 0 });
  });
});
