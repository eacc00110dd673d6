// The admission bench's write floor (issue 28): the rows one admitted level leaves (its pages
// captured, a capture_submissions row, an archive and its outbox tuple each, and the next level's
// rows), written alone with the leanest SQL there is (new rows by COPY, the pages' updates and the
// next level's rows from arrays; 1,000 a statement, one transaction) into the same tables with the same indexes, constraints and triggers. What that
// costs is about the least any admission's writes can cost: beside the bare reads it says how
// near 1.0 an admission can come on this machine. pipeline() writes the same rows as admission
// meets them, while the level's objects are read and parsed: that, timed, is the least an
// admission of the level can take.
import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import type { Db, Queryable } from '../src/db/connect.ts';
import { copyRows } from '../src/db/copy.ts';
import { CANDIDATE_CHUNK, chunkShare, PAGE_ROWS_CHUNK } from '../src/domain/admission-planner.ts';
import { mapLimit } from '../src/domain/map-limit.ts';
import { OUTBOX_COPY } from '../src/fga/outbox.ts';
import { archiveTuples } from '../src/fga/tuples.ts';
import { WriteQueue } from '../src/ledger/admission-write.ts';
import { ARCHIVES_COPY, SUBMISSIONS_COPY } from '../src/ledger/register.ts';
import { startBenchCrawl } from './support-crawl.ts';

/** Rows a statement of the floor writes. */
const FLOOR_CHUNK = 1000;

export interface FloorLevel {
  pages: number;
  /** rows the admission measured inserted at depth 1 */
  nextRows: number;
  hosts: number;
}

type Row = { id: number; url: string; task: string };

/** What the floor wrote: rows changed or added, by table */
export type FloorRows = Record<'pages' | 'submissions' | 'archives' | 'tuples' | 'nextRows', number>;

/** A crawl of its own whose level 0 is `pages` pending pages, as a level is before its report. */
export async function floorLevel(db: Db, level: FloorLevel): Promise<{ write: () => Promise<FloorRows>; pipeline: (read: FloorReads) => Promise<FloorRows> }> {
  const urls = Array.from({ length: level.pages }, (_, i) => `https://h${i % level.hosts}.floor.test/p/${i}`);
  const crawlId = await startBenchCrawl(db, urls, level.pages + level.nextRows);
  const pages = await db.selectFrom('crawl_pages').select(['id', 'url']).where('crawl_id', '=', crawlId).orderBy('id').execute();
  const rows = pages.map((p) => ({ ...p, task: randomUUID() }));
  const next = Array.from({ length: level.nextRows }, (_, i) => `https://h${i % level.hosts}.floor.test/p/${level.pages + i}`);
  return {
    // the rows alone, 1,000 a statement: the floor under the writes
    write: () =>
      db.transaction().execute(async (trx) => {
        const written = emptyRows();
        for (let i = 0; i < rows.length; i += FLOOR_CHUNK) add(written, await writePages(trx, crawlId, rows.slice(i, i + FLOOR_CHUNK)));
        for (let i = 0; i < next.length; i += FLOOR_CHUNK) written.nextRows += await writeNext(trx, crawlId, next.slice(i, i + FLOOR_CHUNK));
        return written;
      }),
    pipeline: (read) => pipelined(db, crawlId, rows, next, read),
  };
}

/** The reads the pipelined floor waits on: page i's objects read (and parsed), `inFlight` at a time. */
export interface FloorReads {
  page: (i: number) => Promise<unknown>;
  inFlight: number;
}

/**
 * The floor as admission meets it: the same rows written while the level is read, in chunks that
 * shrink as admission's do near the level's end (admission-planner.ts), on one transaction's
 * connection, the next level's rows handed over as the pages that name them are read. What this
 * costs beside the bare reads is the least an admission that reads, parses and writes can cost.
 */
async function pipelined(db: Db, crawlId: string, rows: Row[], next: string[], read: FloorReads): Promise<FloorRows> {
  return db.transaction().execute(async (trx) => {
    const written = emptyRows();
    const queue = new WriteQueue();
    const handed = { pages: 0, next: 0 };
    let added = 0;
    const handOver = (final: boolean): void => {
      const share = chunkShare(rows.length - added);
      if (final || added - handed.pages >= Math.ceil(PAGE_ROWS_CHUNK * share)) {
        const chunk = rows.slice(handed.pages, added);
        handed.pages = added;
        if (chunk.length > 0) queue.push(async () => add(written, await writePages(trx, crawlId, chunk)));
      }
      const due = final ? next.length : Math.floor((next.length * added) / rows.length);
      if (final || due - handed.next >= Math.ceil(CANDIDATE_CHUNK * share)) {
        const chunk = next.slice(handed.next, due);
        handed.next = due;
        if (chunk.length > 0) queue.push(async () => void (written.nextRows += await writeNext(trx, crawlId, chunk)));
      }
    };
    await mapLimit(rows, read.inFlight, async (_, i) => {
      await read.page(i);
      added += 1;
      handOver(false);
    });
    handOver(true);
    await queue.done();
    return written;
  });
}

const emptyRows = (): FloorRows => ({ pages: 0, submissions: 0, archives: 0, tuples: 0, nextRows: 0 });

function add(into: FloorRows, w: Omit<FloorRows, 'nextRows'>): void {
  for (const k of ['pages', 'submissions', 'archives', 'tuples'] as const) into[k] += w[k];
}

/** Next-level rows, pending; returns how many landed. */
async function writeNext(trx: Queryable, crawlId: string, urls: string[]): Promise<number> {
  const res = await sql`
    INSERT INTO crawl_pages (crawl_id, url, depth, host, action)
    SELECT ${crawlId}::uuid, u, 1, split_part(u, '/', 3), 'follow' FROM unnest(${urls}::text[]) AS u
    ON CONFLICT (crawl_id, url_hash) DO NOTHING
  `.execute(trx);
  return Number(res.numAffectedRows ?? 0);
}

/** Some pages' own rows: captured, their submissions, archives and tuples. */
async function writePages(trx: Queryable, crawlId: string, rows: Row[]): Promise<Omit<FloorRows, 'nextRows'>> {
  const at = new Date().toISOString();
  const [ids, tasks, urls] = [rows.map((r) => r.id), rows.map((r) => r.task), rows.map((r) => r.url)];
  const pages = await sql`
    UPDATE crawl_pages p SET state = 'captured', task_id = x.task, final_url = x.url, submitted_at = ${at}::timestamptz, finished_at = ${at}::timestamptz
    FROM unnest(${ids}::bigint[], ${tasks}::text[], ${urls}::text[]) AS x(id, task, url) WHERE p.id = x.id
  `.execute(trx);
  await copyRows(
    trx,
    SUBMISSIONS_COPY,
    // the manifest's version as the report names it (a stand-in of a version id's length)
    rows.map((r) => [r.task, 'bench', 'bench', crawlId, r.url, `bench/${r.task}.result.json`, r.task.replaceAll('-', ''), null]),
  );
  // the provenance admission keeps for such a manifest
  const archives = rows.map((r) => {
    const provenance = { manifestKey: `bench/${r.task}.result.json`, formats: ['wacz', 'links'], software: 'bench', startedAt: at, finishedAt: at };
    return [randomUUID(), r.task, 'captures', `bench/${r.task}.wacz`, null, r.url, r.url, 'a'.repeat(64), 4096, JSON.stringify(provenance), at];
  });
  await copyRows(trx, ARCHIVES_COPY, archives);
  const tuples = archives.flatMap((a) => archiveTuples(a[0] as string, crawlId));
  await copyRows(
    trx,
    OUTBOX_COPY,
    tuples.map((t) => ['write', t.user, t.relation, t.object, null]),
  );
  return { pages: Number(pages.numAffectedRows ?? 0), submissions: rows.length, archives: archives.length, tuples: tuples.length };
}
