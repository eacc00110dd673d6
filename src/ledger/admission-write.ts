// Admission's last stage (admit-level.ts: read → plan → write): the plan, written in one
// transaction with ON CONFLICT throughout, so a retried or repeated admission leaves the same rows,
// archives and tuples. The level's report row is locked first: a report that replaced the one
// planned from fails the admission (StaleReport) and nothing is written.
import type { Db } from '../db/connect.ts';
import type { Transaction } from 'kysely';
import type { Database } from '../db/types.ts';
import { capturesOf, withoutForeignTask, type AdmissionPlan, type NextLevelPlan } from '../domain/admission-plan.ts';
import type { PageAdmission } from '../domain/admission.ts';
import { replaceLevelDecisions, replaceLevelRefusals, replaceLevelSkipped } from '../store/decisions.ts';
import { lockLevelReport, markDepthReached, markReportAdmitted } from '../store/crawls.ts';
import { recordHosts } from '../store/level-dispatches.ts';
import { applyPageAdmissions, cutLevel, failUnreported, insertCandidates, levelHasPages, pagesCut, resetFrontier } from '../store/pages.ts';
import { staleReport } from './admission-errors.ts';
import { recordSubmissions, registerCaptures, type Registration } from './register.ts';

type Trx = Transaction<Database>;

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

export async function writeAdmission(db: Db, level: { crawlId: string; depth: number; reportId: string }, plan: AdmissionPlan): Promise<WrittenLevel> {
  const { crawlId, depth } = level;
  return db.transaction().execute(async (trx) => {
    const current = await lockLevelReport(trx, crawlId, depth);
    if (current !== level.reportId) throw staleReport(crawlId, depth, level.reportId, current ?? 'none');
    await recordHosts(trx, crawlId, plan.hosts);
    await markReportAdmitted(trx, crawlId, depth, level.reportId);
    await markDepthReached(trx, crawlId, depth);
    const pages = await writePageRows(trx, crawlId, depth, plan);
    const unreported = await failUnreported(trx, crawlId, depth);
    const next = plan.next === null ? { nextLevelPages: 0, cutPages: 0, frontierRemoved: 0 } : await writeNextLevel(trx, crawlId, depth, plan.next);
    await replaceLevelRefusals(trx, crawlId, depth, plan.refusals);
    return { ...pages, unreported, ...next, cutSoFar: await pagesCut(trx, crawlId) };
  });
}

/** Each page's own rows: its capture_submissions row, its archive with its tuples, its state. */
async function writePageRows(trx: Trx, crawlId: string, depth: number, plan: AdmissionPlan): Promise<Pick<WrittenLevel, 'admissions' | 'registrations'>> {
  const written = await recordSubmissions(trx, plan.submissions);
  // a task whose submission another crawl took meanwhile is foreign after all
  const taken = new Set(plan.submissions.filter((s) => !written.has(s.taskId)).map((s) => s.taskId));
  const admissions = taken.size === 0 ? plan.admissions : plan.admissions.map((a) => withoutForeignTask(a, taken));
  const registrations = await registerCaptures(trx, capturesOf(admissions, crawlId));
  await applyPageAdmissions(trx, crawlId, depth, admissions);
  return { admissions, registrations };
}

/**
 * The chosen links as pages of depth + 1, cut at the page budget. A next level with no rows yet
 * (a first admission) is exactly what lands now, in order, so it lands already cut. Rows a
 * replaced report introduced and this one no longer names go (those it still names keep their
 * place, ahead of new ones), and the level is cut afresh.
 */
async function writeNextLevel(
  trx: Trx,
  crawlId: string,
  depth: number,
  next: NextLevelPlan,
): Promise<{ nextLevelPages: number; cutPages: number; frontierRemoved: number }> {
  const hadPages = await levelHasPages(trx, crawlId, depth + 1);
  let frontierRemoved = 0;
  let landed = await insertCandidates(trx, crawlId, depth + 1, next.candidates, hadPages ? undefined : { placed: 0, slots: next.slots });
  if (hadPages) {
    frontierRemoved = await resetFrontier(
      trx,
      crawlId,
      depth + 1,
      next.candidates.map((c) => c.url),
    );
    landed = await cutLevel(trx, crawlId, depth + 1, next.slots);
  }
  await replaceLevelDecisions(trx, crawlId, depth, next.decisions);
  await replaceLevelSkipped(trx, crawlId, depth, next.skipped);
  return { nextLevelPages: landed.kept, cutPages: landed.cut + next.cutUninserted, frontierRemoved };
}
