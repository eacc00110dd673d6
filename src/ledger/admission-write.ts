// Admission's last stage (admit-level.ts: read → plan → write): the plan, written in one
// transaction with ON CONFLICT throughout, so a retried or repeated admission leaves the same rows,
// archives and tuples. Page rows and next-level candidates are written as the plan hands them
// over, while the level is still read; the level's report row is locked last: a report that
// replaced the one planned from fails the admission (StaleReport) and nothing is written.
import type { Db, Trx } from '../db/connect.ts';
import { capturesOf, withoutForeignTask, type AdmissionPlan, type NextLevelPlan } from '../domain/admission-plan.ts';
import type { PageRows } from '../domain/admission-planner.ts';
import type { PageAdmission } from '../domain/admission.ts';
import { replaceLevelDecisions, replaceLevelRefusals, replaceLevelSkipped } from '../store/decisions.ts';
import { lockLevelReport, markDepthReached, markReportAdmitted } from '../store/crawls.ts';
import { recordHosts } from '../store/level-dispatches.ts';
import { applyPageAdmissions, cutLevel, failUnreported, insertCandidates, levelHasPages, pagesCut, resetFrontier } from '../store/pages.ts';
import { staleReport } from './admission-errors.ts';
import { recordSubmissions, registerCaptures, type Registration } from './register.ts';

export interface WrittenLevel {
  /** the admissions as written: a task another crawl took meanwhile is failed after all */
  admissions: PageAdmission[];
  registrations: Registration[];
  unreported: number;
  nextLevelPages: number;
  cutPages: number;
  cutSoFar: number;
  frontierRemoved: number;
}

/** Where the plan's rows go while the level is still read: each chunk is queued on the transaction's connection. */
export interface AdmissionSink {
  pages(rows: PageRows): void;
  /** next-level candidates, in the order chosen, never more than the plan's next.candidates; `slots`: the pages depth + 1 may take */
  candidates(rows: NextLevelPlan['candidates'], slots: number): void;
}

/** the level admitted; `pageIds`: its rows by URL (LevelFacts.pageIds) */
type Level = { crawlId: string; depth: number; reportId: string; pageIds: ReadonlyMap<string, number> };
/** the next level's rows landed so far, and whether it had rows before this admission */
type Landed = { kept: number; cut: number; hadPages: boolean };

/**
 * One transaction: `produce` hands page rows and candidates to the sink as they are planned (they
 * are written meanwhile, one chunk at a time) and returns the whole plan; what needs all of it
 * (unreported pages, the frontier's reset and cut, decisions, refusals) is written last. The
 * report row is locked at the end, not during the reads: a report that replaced the one planned
 * from fails the admission (StaleReport) and the transaction, with all it wrote, is rolled back.
 */
export async function writeAdmission(db: Db, level: Level, produce: (sink: AdmissionSink) => Promise<AdmissionPlan>): Promise<WrittenLevel> {
  const { crawlId, depth } = level;
  return db.transaction().execute(async (trx) => {
    const queue = new WriteQueue();
    const pages = { written: new Map<number, PageAdmission>(), registrations: [] as Registration[] };
    const landed: Landed = { kept: 0, cut: 0, hadPages: false };
    queue.push(async () => {
      landed.hadPages = await levelHasPages(trx, crawlId, depth + 1);
      await markDepthReached(trx, crawlId, depth);
    });
    const sink: AdmissionSink = {
      pages: (rows) => queue.push(async () => writePageRows(trx, crawlId, level.pageIds, rows, pages)),
      candidates: (rows, slots) => queue.push(async () => insertLanded(trx, crawlId, depth + 1, { rows, slots }, landed)),
    };
    const plan = await produce(sink);
    await queue.done();
    const current = await lockLevelReport(trx, crawlId, depth);
    if (current !== level.reportId) throw staleReport(crawlId, depth, level.reportId, current ?? 'none');
    await recordHosts(trx, crawlId, plan.hosts);
    await markReportAdmitted(trx, crawlId, depth, level.reportId);
    const unreported = await failUnreported(trx, crawlId, depth);
    const next = plan.next === null ? { nextLevelPages: 0, cutPages: 0, frontierRemoved: 0 } : await finishNextLevel(trx, crawlId, depth, plan.next, landed);
    await replaceLevelRefusals(trx, crawlId, depth, plan.refusals);
    const admissions = plan.admissions.map((a, i) => pages.written.get(i) ?? a);
    return { admissions, registrations: pages.registrations, unreported, ...next, cutSoFar: await pagesCut(trx, crawlId) };
  });
}

/** Writes run one at a time, in the order queued; a failure is thrown by done(). */
export class WriteQueue {
  private tail: Promise<void> = Promise.resolve();
  push(write: () => Promise<void>): void {
    this.tail = this.tail.then(write);
    // awaited in done(); until then a failure must not count as unhandled
    this.tail.catch(() => undefined);
  }
  done(): Promise<void> {
    return this.tail;
  }
}

/** Some pages' own rows: their capture_submissions rows, archives with their tuples, states. */
async function writePageRows(
  trx: Trx,
  crawlId: string,
  pageIds: ReadonlyMap<string, number>,
  rows: PageRows,
  into: { written: Map<number, PageAdmission>; registrations: Registration[] },
): Promise<void> {
  const written = await recordSubmissions(trx, rows.submissions);
  // a task whose submission another crawl took meanwhile is foreign after all
  const taken = new Set(rows.submissions.filter((s) => !written.has(s.taskId)).map((s) => s.taskId));
  const admissions = taken.size === 0 ? rows.admissions : rows.admissions.map((a) => withoutForeignTask(a, taken));
  into.registrations.push(...(await registerCaptures(trx, capturesOf(admissions, crawlId))));
  await applyPageAdmissions(trx, admissions, pageIds);
  if (taken.size > 0) admissions.forEach((a, k) => into.written.set(rows.indexes[k]!, a));
}

/**
 * Candidates land in the order chosen. A next level with no rows before this admission (a first
 * one) is exactly what lands, in order, so each chunk lands already cut at the budget.
 */
async function insertLanded(
  trx: Trx,
  crawlId: string,
  depth: number,
  chunk: { rows: NextLevelPlan['candidates']; slots: number },
  landed: Landed,
): Promise<void> {
  const budget = landed.hadPages ? undefined : { placed: landed.kept + landed.cut, slots: chunk.slots };
  const r = await insertCandidates(trx, crawlId, depth, chunk.rows, budget);
  landed.kept += r.kept;
  landed.cut += r.cut;
}

/**
 * The next level once every candidate landed. Rows a replaced report introduced and this one no
 * longer names go (those it still names keep their place, ahead of new ones), and the level is
 * cut afresh; a first admission's rows landed already cut.
 */
async function finishNextLevel(
  trx: Trx,
  crawlId: string,
  depth: number,
  next: NextLevelPlan,
  landed: Landed,
): Promise<{ nextLevelPages: number; cutPages: number; frontierRemoved: number }> {
  let frontierRemoved = 0;
  let counts = { kept: landed.kept, cut: landed.cut };
  if (landed.hadPages) {
    frontierRemoved = await resetFrontier(
      trx,
      crawlId,
      depth + 1,
      next.candidates.map((c) => c.url),
    );
    counts = await cutLevel(trx, crawlId, depth + 1, next.slots);
  }
  await replaceLevelDecisions(trx, crawlId, depth, next.decisions);
  await replaceLevelSkipped(trx, crawlId, depth, next.skipped);
  return { nextLevelPages: counts.kept, cutPages: counts.cut + next.cutUninserted, frontierRemoved };
}
