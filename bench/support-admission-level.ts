// The level the admission bench admits: what the flow and the capturer would have left for one
// reported level of a crawl (a manifest and a links artifact per page in the bucket, the level's
// report stored), and the rows an admission leaves, counted.
import { randomUUID } from 'node:crypto';
import type { S3Client } from '@aws-sdk/client-s3';
import type { Db } from '../src/db/connect.ts';
import type { Manifest, PageReport } from '../src/domain/contract.ts';
import { mapLimit } from '../src/domain/map-limit.ts';
import { s3Store } from '../src/flow/store.ts';
import { upsertLevelReport } from '../src/store/crawls.ts';
import { BENCH_PREFIX } from './support-objects.ts';
import { startBenchCrawl } from './support-crawl.ts';

/** How the level's pages link: `linksPerPage` each, the first `navLinks` of them the host's navigation. */
export interface LevelShape {
  hosts: number;
  linksPerPage: number;
  navLinks: number;
}

/** An object the bench's capturer put, at the version the (versioned) bucket gave it. */
export interface ObjectRef {
  key: string;
  versionId?: string;
}

export interface SeededLevel {
  crawlId: string;
  /** each page's manifest and links artifact, as admission reads them (by version) */
  objects: { manifest: ObjectRef; links: ObjectRef }[];
}

/**
 * A crawl of `size` seeds (its page budget three times that), every page captured with its
 * manifest and links artifact in `bucket`, and its level 0 reported. The crawl's id is pushed
 * onto `seeded`, so its objects can be taken out of the bucket afterwards.
 */
export async function seedBenchLevel(
  to: { db: Db; s3: S3Client; bucket: string; seeded: string[] },
  { hosts, linksPerPage, navLinks }: LevelShape,
  size: number,
): Promise<SeededLevel> {
  const { db, s3, bucket } = to;
  const store = s3Store(s3, bucket);
  const urls = Array.from({ length: size }, (_, i) => `https://h${i % hosts}.bench.test/p/${i}`);
  const crawlId = await startBenchCrawl(db, urls, size * 3);
  to.seeded.push(crawlId);
  const prefix = `${BENCH_PREFIX}${crawlId}/0`;
  const now = Date.now();
  const seededPages = await mapLimit(urls, 32, async (url, i) => {
    const taskId = randomUUID();
    const base = `${prefix}/${taskId}`;
    const links = Array.from({ length: linksPerPage }, (_, j) => ({ href: j < navLinks ? `/nav/${j}` : `/p/${(i * 7 + j * 13) % (size * 2)}` }));
    const manifest: Manifest = {
      taskId,
      url,
      finalUrl: url,
      status: 'succeeded',
      artifacts: [{ format: 'wacz', bucket, key: `${base}.wacz`, sha256: 'a'.repeat(64), size: 4096 }],
      software: 'bench',
      startedAt: new Date(now - 2000).toISOString(),
      finishedAt: new Date(now - 1000).toISOString(),
    };
    // as a capture worker writes them (its store): the links artifact, then the manifest naming
    // its version; the report names the manifest's
    const put = async (key: string, body: unknown): Promise<ObjectRef> => ({
      key,
      ...(await store.put(key, Buffer.from(JSON.stringify(body)), 'application/json')),
    });
    const linksObject = await put(`${base}.links.json`, { url, finalUrl: url, links });
    manifest.artifacts.push({ format: 'links', bucket, ...linksObject, sha256: 'b'.repeat(64), size: 512 });
    const manifestObject = await put(`${base}.result.json`, manifest);
    const page: PageReport = {
      url,
      status: 'captured',
      taskId,
      manifestKey: manifestObject.key,
      ...(manifestObject.versionId !== undefined ? { manifestVersionId: manifestObject.versionId } : {}),
      finalUrl: url,
      submittedAt: manifest.startedAt,
      finishedAt: manifest.finishedAt,
    };
    return { page, objects: { manifest: manifestObject, links: linksObject } };
  });
  const reported = seededPages.map((p) => p.page);
  await db.updateTable('crawls').set({ dispatched_depth: 0 }).where('id', '=', crawlId).execute();
  await upsertLevelReport(db, crawlId, 0, { depth: 0, pages: reported }, 'capture-flow');
  return { crawlId, objects: seededPages.map((p) => p.objects) };
}

/** Rows in one of the tables admission adds to. */
export async function tableRows(db: Db, table: 'archives' | 'fga_outbox'): Promise<number> {
  return Number((await db.selectFrom(table).select(db.fn.countAll<number>().as('n')).executeTakeFirstOrThrow()).n);
}

/** Rows an admission left at depth 1 of a crawl, cut ones included. */
export async function nextLevelRows(db: Db, crawlId: string): Promise<number> {
  const r = await db
    .selectFrom('crawl_pages')
    .select(db.fn.countAll<number>().as('n'))
    .where('crawl_id', '=', crawlId)
    .where('depth', '=', 1)
    .executeTakeFirstOrThrow();
  return Number(r.n);
}
