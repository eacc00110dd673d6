// Admission's first stage (admit-level.ts: read → plan → write): what the ledger holds about the
// level (the crawl, the report, the dispatched pages, the prefix, the task ids others hold), then
// every manifest and links artifact the report leads to, read at most `concurrency` at a time.
// Nothing is written here.
import type { Db } from '../db/connect.ts';
import type { ManifestRead } from '../domain/admission.ts';
import { admittedPages, linksToRead, type PageRead } from '../domain/admission-plan.ts';
import type { LevelReportBody, PageReport } from '../domain/contract.ts';
import { foreignTaskProblem } from '../domain/level-dispatch.ts';
import { mapLimit } from '../domain/map-limit.ts';
import { admissionCrawl, getLevelReport, type AdmissionCrawl } from '../store/crawls.ts';
import { levelPages, pagesTaken } from '../store/pages.ts';
import { foreignTaskIds, foreignTaskIdsOfReport } from '../store/task-owners.ts';
import { AdmissionError, staleReport } from './admission-errors.ts';
import { levelArtifactPrefix } from './level.ts';
import { placedManifest, readLinks, type ObjectSource } from './manifest-read.ts';

export interface LevelFacts {
  crawlId: string;
  depth: number;
  crawl: AdmissionCrawl;
  reportId: string;
  report: LevelReportBody;
  /** the reported pages admitted: those the level dispatched, the last report of a URL */
  pages: PageReport[];
  actionOf: ReadonlyMap<string, 'follow' | 'capture'>;
  /** the level's rows by URL (dispatched, not cut): where each page's admission is written */
  pageIds: ReadonlyMap<string, number>;
  levelHosts: ReadonlySet<string>;
  /** where the level's manifests and artifacts must lie; absent for a level stored without a
   * dispatch record (none is taken by the API): then each key is held to its own prefix */
  prefix?: string;
  foreign: ReadonlySet<string>;
  /** null: the next level is not planned; else the pages this level and those before it took */
  taken: number | null;
}

/**
 * The ledger's side of the level. `reportId`, when given, must be the level's current report:
 * a replaced one is a StaleReport failure.
 */
export async function readLevelFacts(db: Db, input: { crawlId: string; depth: number; reportId?: string; expand: boolean }): Promise<LevelFacts> {
  const { crawlId, depth } = input;
  // all at once: the task ids others hold are read from the stored report beside the report itself
  const [crawl, row, dispatched, prefix, named, takenSoFar] = await Promise.all([
    admissionCrawl(db, crawlId),
    getLevelReport(db, crawlId, depth),
    levelPages(db, crawlId, depth),
    levelArtifactPrefix(db, crawlId, depth),
    foreignTaskIdsOfReport(db, crawlId, depth),
    input.expand ? pagesTaken(db, crawlId, depth) : null,
  ]);
  if (crawl === undefined) throw new AdmissionError(`crawl ${crawlId} does not exist`);
  if (row === undefined) throw new AdmissionError(`crawl ${crawlId} has no report for level ${depth}`);
  if (input.reportId !== undefined && input.reportId !== row.report_id) throw staleReport(crawlId, depth, input.reportId, row.report_id);
  const report = row.body as LevelReportBody;
  const actionOf = new Map(dispatched.map((p) => [p.url, p.action]));
  const pages = admittedPages(report.pages, actionOf);
  const expand = input.expand && depth < crawl.max_depth;
  const foreign = await foreignOfReport(db, { crawlId, depth, reportId: row.report_id, pages }, named);
  const taken = expand ? takenSoFar : null;
  return {
    crawlId,
    depth,
    crawl,
    reportId: row.report_id,
    report,
    pages,
    actionOf,
    pageIds: new Map(dispatched.map((p) => [p.url, p.id])),
    levelHosts: new Set(dispatched.map((p) => p.host)),
    ...(prefix !== undefined ? { prefix } : {}),
    foreign,
    taken,
  };
}

/**
 * The task ids others hold of those `pages` name: `named`, read from the stored report beside the
 * report itself, when it was read from the same report; when a new report replaced it between the
 * two reads, they are asked for again, of the pages read.
 */
export async function foreignOfReport(
  db: Db,
  level: { crawlId: string; depth: number; reportId: string; pages: readonly PageReport[] },
  named: { reportId: string | undefined; foreign: Set<string> },
): Promise<ReadonlySet<string>> {
  if (named.reportId === level.reportId) return named.foreign;
  return foreignTaskIds(db, level.crawlId, level.depth, taskIdsOf(level.pages));
}

const taskIdsOf = (pages: readonly PageReport[]): string[] => pages.flatMap((p) => (p.taskId !== undefined ? [p.taskId] : []));

/**
 * Per admitted page, index for index: its manifest, then (a captured follow page below maxDepth,
 * when expanding) its links. `onRead` hears of each page as soon as its reads are done.
 */
export function readLevelObjects(
  source: ObjectSource,
  bucket: string,
  facts: LevelFacts,
  concurrency: number,
  onRead: (i: number, read: PageRead) => void = () => undefined,
): Promise<PageRead[]> {
  return mapLimit(facts.pages, concurrency, async (p, i): Promise<PageRead> => {
    const read = await pageObjects(source, bucket, p, facts);
    onRead(i, read);
    return read;
  });
}

async function pageObjects(source: ObjectSource, bucket: string, p: PageReport, facts: LevelFacts): Promise<PageRead> {
  const read = await manifestOf(source, bucket, p, facts);
  const level = { depth: facts.depth, maxDepth: facts.crawl.max_depth, action: facts.actionOf.get(p.url) ?? 'capture' };
  const artifact = facts.taken === null ? null : linksToRead(p, read, level);
  if (artifact === null) return { read };
  const r = await readLinks(source, artifact);
  return 'links' in r ? { read, links: r.links } : { read, linksError: r.error };
}

function manifestOf(source: ObjectSource, bucket: string, p: PageReport, facts: LevelFacts): Promise<ManifestRead> | ManifestRead {
  if (p.taskId !== undefined && facts.foreign.has(p.taskId)) return { kind: 'refused', error: foreignTaskProblem(p.taskId) };
  if (p.taskId === undefined || p.manifestKey === undefined) return { kind: 'absent' };
  return placedManifest(source, bucket, {
    taskId: p.taskId,
    manifestKey: p.manifestKey,
    ...(p.manifestVersionId !== undefined ? { manifestVersionId: p.manifestVersionId } : {}),
    ...(facts.prefix !== undefined ? { prefix: facts.prefix } : {}),
  });
}
