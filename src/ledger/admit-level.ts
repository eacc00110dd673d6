// Admitting one reported level into the ledger (the fast path of "Filling the ledger"), in three
// stages, each testable on its own:
//
//   read  (admission-read.ts)       the ledger's facts about the level, then every manifest at
//                                   exactly its reported key and every follow page's links
//                                   artifact, bounded and concurrent
//   plan  (domain/admission-plan.ts) pure: per page what it becomes (the manifest wins over the
//                                   report), which links the rules take, what the budget allows
//   write (admission-write.ts)      one transaction, ON CONFLICT throughout: idempotent
//
// For every reported page that carries a task id: a capture_submissions row (task → organization,
// manifest key or error), failures included. Succeeded captures with a WACZ become archives with
// their tuples. The links the rules pick become the next level, cut so the crawl never takes more
// than maxPages.
import type { S3Client } from '@aws-sdk/client-s3';
import type { Db } from '../db/connect.ts';
import { slotsOf, type AdmissionPlan, type PlanInput } from '../domain/admission-plan.ts';
import { AdmissionPlanner, type ReadyRows } from '../domain/admission-planner.ts';
import { checkParsedUrl, type AddressPolicy } from '../domain/address-policy.ts';
import { rulesFromFixed } from '../domain/rules/index.ts';
import { readLevelFacts, readLevelObjects, type LevelFacts } from './admission-read.ts';
import { writeAdmission, type WrittenLevel } from './admission-write.ts';
import type { ObjectReader } from '../s3/object-reader.ts';

export { AdmissionError } from './admission-errors.ts';

export interface AdmitDeps {
  db: Db;
  s3: S3Client;
  /** where manifests are read (the report carries keys only) */
  bucket: string;
  /** a lean signed-GET reader (src/s3/object-reader.ts); without it, reads go through the SDK client */
  reader?: ObjectReader;
  /** concurrent S3 reads (default DEFAULT_READ_CONCURRENCY) */
  readConcurrency?: number;
  log?: { warn(msg: string, meta?: Record<string, unknown>): void };
  /** the address policy links are held to (src/domain/address-policy.ts); without it, only the length limits */
  policy?: AddressPolicy;
}

export interface AdmitLevelInput {
  crawlId: string;
  depth: number;
  /**
   * Read links and plan the next level. False when re-admitting a level whose next level was
   * already dispatched: the ledger is corrected, the frontier is left alone.
   */
  expand: boolean;
  /** the report to admit: when the level's current report is another one (a newer report replaced
   * it), admission fails with StaleReport and writes nothing. Absent: the current one. */
  reportId?: string;
}

export interface AdmitLevelResult {
  crawlId: string;
  depth: number;
  /** the report that was admitted (the newest stored for the level) */
  reportId: string;
  pages: number;
  captured: number;
  failed: number;
  skipped: number;
  /** reported pages the manifest corrected */
  corrected: number;
  /** archives this admission added (0 when repeated) */
  archivesCreated: number;
  /** archives of this level in the ledger, new or not */
  archives: number;
  /** pages whose manifest could not be read (left to reconcile) */
  manifestsUnreadable: number;
  /** dispatched pages the report did not mention, now failed */
  unreported: number;
  linksRead: number;
  /** pages waiting at depth + 1 */
  nextLevelPages: number;
  /** pages found for depth + 1 that maxPages left out */
  cutPages: number;
  /** pages the cap cut anywhere in the crawl so far, seeds included */
  cutSoFar: number;
  /** next-level pages a replaced report had introduced and this one no longer names */
  frontierRemoved: number;
  expanded: boolean;
  /** where the time went, in ms: reading (the ledger's facts, manifests and links), planning (selectMs: admissions, link choice, refusals), writing */
  timings: { readMs: number; selectMs: number; writeMs: number };
}

/** S3 reads in flight while a level is admitted */
export const DEFAULT_READ_CONCURRENCY = 48;

export async function admitLevel(deps: AdmitDeps, input: AdmitLevelInput): Promise<AdmitLevelResult> {
  const t0 = performance.now();
  const facts = await readLevelFacts(deps.db, input);
  const planInput = planInputOf(deps, facts);
  const at: { t1: number; t2: number; plan?: AdmissionPlan } = { t1: 0, t2: 0 };
  // the plan's rows are written while the rest of the level is still read
  const written = await writeAdmission(deps.db, facts, async (sink) => {
    const planner = new AdmissionPlanner(planInput);
    const handOver = ({ pages, candidates }: ReadyRows): void => {
      if (pages !== null) sink.pages(pages);
      if (candidates.length > 0) sink.candidates(candidates, slotsOf(planInput));
    };
    const concurrency = deps.readConcurrency ?? DEFAULT_READ_CONCURRENCY;
    await readLevelObjects(deps.reader ?? deps.s3, deps.bucket, facts, concurrency, (i, read) => {
      planner.add(i, read);
      handOver(planner.ready());
    });
    at.t1 = performance.now();
    const { plan, rest } = planner.finish();
    handOver(rest);
    logNotes(deps, facts, plan);
    at.t2 = performance.now();
    at.plan = plan;
    return plan;
  });
  const t3 = performance.now();
  return resultOf(facts, at.plan!, written, { readMs: Math.round(at.t1 - t0), selectMs: Math.round(at.t2 - at.t1), writeMs: Math.round(t3 - at.t2) });
}

/** What the planner is given for the level (the bench's phases plan with it too). */
export function planInputOf(deps: Pick<AdmitDeps, 'policy'>, facts: LevelFacts): Omit<PlanInput, 'reads'> {
  return {
    crawlId: facts.crawlId,
    depth: facts.depth,
    crawl: plannedCrawl(facts),
    report: facts.report,
    pages: facts.pages,
    foreign: facts.foreign,
    levelHosts: facts.levelHosts,
    expand: facts.taken === null ? null : { taken: facts.taken, ...refuseOf(deps.policy) },
    now: new Date(),
  };
}

function plannedCrawl({ crawl }: LevelFacts) {
  return {
    orgId: crawl.org_id,
    submittedBy: crawl.submitted_by,
    rules: rulesFromFixed(crawl.rules),
    seeds: crawl.seeds,
    maxPages: crawl.max_pages,
    perHostDelayMs: crawl.per_host_delay_ms,
  };
}

/** Links are held to the address policy; without one, only to the length limits. */
function refuseOf(policy: AddressPolicy | undefined): { refuse?: (u: URL) => ReturnType<typeof checkParsedUrl> } {
  return policy === undefined ? {} : { refuse: (u) => checkParsedUrl(policy, u) };
}

function logNotes(deps: AdmitDeps, { crawlId, depth }: LevelFacts, { notes }: AdmissionPlan): void {
  if (notes.unreadable > 0) deps.log?.warn('manifests unreadable, left to reconcile', { crawlId, depth, unreadable: notes.unreadable });
  if (notes.refused.length > 0)
    deps.log?.warn('manifests outside the level prefix or bucket: pages failed, nothing registered', {
      crawlId,
      depth,
      refused: notes.refused.length,
      first: notes.refused[0]!.failure,
    });
  for (const e of notes.linksErrors) deps.log?.warn('links artifact unreadable', { crawlId, depth, ...e });
}

function resultOf(facts: LevelFacts, plan: AdmissionPlan, w: WrittenLevel, timings: AdmitLevelResult['timings']): AdmitLevelResult {
  const count = (state: 'captured' | 'failed' | 'skipped'): number => w.admissions.filter((a) => a.state === state).length;
  return {
    crawlId: facts.crawlId,
    depth: facts.depth,
    reportId: facts.reportId,
    pages: w.admissions.length,
    captured: count('captured'),
    failed: count('failed') + w.unreported,
    skipped: count('skipped'),
    corrected: plan.admissions.filter((a) => a.corrected).length,
    archivesCreated: w.registrations.filter((r) => r.created).length,
    archives: w.registrations.filter((r) => r.archiveId !== '').length,
    manifestsUnreadable: plan.notes.unreadable,
    unreported: w.unreported,
    linksRead: plan.linksRead,
    nextLevelPages: w.nextLevelPages,
    cutPages: w.cutPages,
    cutSoFar: w.cutSoFar,
    frontierRemoved: w.frontierRemoved,
    expanded: plan.next !== null,
    timings,
  };
}
