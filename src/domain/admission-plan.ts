// Admission's middle stage (src/ledger/admit-level.ts: read → plan → write): what one reported
// level becomes in the ledger, decided from what the read stage read, without I/O. Per page its
// admission (admitPage) and its capture_submissions row; the links the rules take for the next
// level, as many as the page budget can still use; the refusals to tally; the hosts to record.
import { admitPage, linksArtifactOf, type ArchiveRecord, type ManifestRead, type PageAdmission } from './admission.ts';
import { ERROR_TYPE_ADDRESS_REFUSED, type LevelReportBody, type ManifestArtifact, type ManifestLink, type PageReport } from './contract.ts';
import { levelSlots, readsLinks } from './crawl.ts';
import { RefusalTallies, type RefusalTally } from './decisions.ts';
import { foreignTaskProblem, hostsToRecord, type HostRecord } from './level-dispatch.ts';
import { LinkSelector, type FollowPageLinks, type SelectedLinks, type SelectOptions } from './links.ts';
import type { Rule } from './rules/index.ts';

/** Candidates past the page budget still inserted (as cut rows); beyond them they are only counted. */
export const CUT_ROWS_KEPT = 1000;

/** A capture_submissions row: task id → organization, for every page that carries a task id. */
export interface SubmissionRecord {
  taskId: string;
  orgId: string;
  submittedBy: string;
  crawlId: string | null;
  url: string;
  manifestKey: string | null;
  /** the manifest's version the report named (what reconcile reads), null when it named none */
  manifestVersion: string | null;
  manifestError: string | null;
}

/** What the read stage found for one reported page. */
export interface PageRead {
  read: ManifestRead;
  /** the links artifact's links, when linksToRead named one and it parsed */
  links?: ManifestLink[];
  /** why the links artifact named could not be read or parsed */
  linksError?: string;
}

export interface PlannedCrawl {
  orgId: string;
  submittedBy: string;
  rules: Rule[];
  seeds: string[];
  maxPages: number;
  perHostDelayMs: number;
}

export interface PlanInput {
  crawlId: string;
  depth: number;
  crawl: PlannedCrawl;
  report: Pick<LevelReportBody, 'hosts' | 'pages'>;
  /** the reported pages admitted (dispatched ones, the last report of a URL), in report order */
  pages: readonly PageReport[];
  /** what was read for each of `pages`, index for index */
  reads: readonly PageRead[];
  /** task ids another crawl or level holds */
  foreign: ReadonlySet<string>;
  /** the hosts this level was dispatched to */
  levelHosts: ReadonlySet<string>;
  /** null: the next level is not planned; else the pages this level and those before it took */
  expand: { taken: number; refuse?: SelectOptions['refuse'] } | null;
  now: Date;
}

export interface NextLevelPlan {
  /** the candidates to insert, in the order chosen: the page budget's slots plus CUT_ROWS_KEPT */
  candidates: SelectedLinks['candidates'];
  /** candidates chosen beyond those, counted as cut */
  cutUninserted: number;
  /** pages depth + 1 may still take */
  slots: number;
  decisions: SelectedLinks['decisions'];
  skipped: string[];
}

export interface AdmissionPlan {
  admissions: PageAdmission[];
  /** one per task (the last report of a task wins), failures included */
  submissions: SubmissionRecord[];
  hosts: HostRecord[];
  next: NextLevelPlan | null;
  refusals: RefusalTally[];
  /** follow pages whose links were read */
  linksRead: number;
  /** what is logged: manifests left to reconcile, refused pages, links artifacts not read */
  notes: { unreadable: number; refused: PageAdmission[]; linksErrors: { url: string; error: string }[] };
}

/**
 * The links artifact the read stage reads for a page, or null: only a follow page below maxDepth
 * whose manifest (of its own task) says it succeeded has links to follow.
 */
export function linksToRead(
  page: PageReport,
  read: ManifestRead,
  level: { depth: number; maxDepth: number; action: 'follow' | 'capture' },
): ManifestArtifact | null {
  if (read.kind !== 'ok' || page.taskId === undefined || read.manifest.taskId !== page.taskId) return null;
  if (!readsLinks(level.action, level.depth, level.maxDepth)) return null;
  return linksArtifactOf(read.manifest);
}

export function planAdmission(input: PlanInput): AdmissionPlan {
  const admissions = input.pages.map((p, i) => admissionOf(input, p, input.reads[i]!.read));
  return assemblePlan(input, admissions, input.expand === null ? null : chooseLinks(input, admissions));
}

/** What one page becomes: admitPage, with a task another crawl or level holds failed. */
export function admissionOf(input: Pick<PlanInput, 'foreign' | 'now'>, page: PageReport, read: ManifestRead): PageAdmission {
  return withoutForeignTask(admitPage(page, read, input.now), input.foreign);
}

/** The plan from every page's admission and the links chosen (null: the next level is not planned). */
export function assemblePlan(input: PlanInput, admissions: PageAdmission[], selection: SelectedLinks | null): AdmissionPlan {
  return {
    admissions,
    submissions: submissionsOf(input, input.pages, admissions),
    hosts: hostsToRecord(input.report, input.levelHosts, input.crawl.perHostDelayMs, input.now),
    next: selection === null ? null : nextLevelOf(selection, slotsOf(input)),
    refusals: refusalsOf(input.reads, admissions, selection?.refused ?? []),
    linksRead: input.reads.filter((r) => r.links !== undefined).length,
    notes: notesOf(input.reads, admissions),
  };
}

/** Pages depth + 1 may still take (0 when it is not planned). */
export const slotsOf = (input: Pick<PlanInput, 'expand' | 'crawl'>): number =>
  input.expand === null ? 0 : levelSlots(input.expand.taken, input.crawl.maxPages);

/** The link selector the level's follow pages are added to, in the report's order (the choice depends on it). */
export function linkSelectorOf(input: Pick<PlanInput, 'crawl' | 'expand'>): LinkSelector {
  const { crawl, expand } = input;
  return new LinkSelector(crawl.rules, crawl.seeds, expand?.refuse !== undefined ? { refuse: expand.refuse } : {});
}

/** What a page whose links were read adds to the link choice. */
export function followPageOf(a: PageAdmission, links: ManifestLink[]): FollowPageLinks {
  return { url: a.url, ...(a.finalUrl !== null ? { finalUrl: a.finalUrl } : {}), links };
}

/** The links of every page whose links were read, chosen in the report's order. */
function chooseLinks(input: PlanInput, admissions: readonly PageAdmission[]): SelectedLinks {
  const selector = linkSelectorOf(input);
  input.reads.forEach((r, i) => {
    if (r.links !== undefined) selector.add(followPageOf(admissions[i]!, r.links));
  });
  return selector.result();
}

function nextLevelOf(selection: SelectedLinks, slots: number): NextLevelPlan {
  const candidates = selection.candidates.slice(0, slots + CUT_ROWS_KEPT);
  return {
    candidates,
    cutUninserted: selection.candidates.length - candidates.length,
    slots,
    decisions: selection.decisions,
    skipped: selection.skipped,
  };
}

/** The capture_submissions rows of `pages` (index for index with `admissions`): one per task, the last report of it. */
export function submissionsOf(
  input: Pick<PlanInput, 'crawlId' | 'crawl'>,
  pages: readonly PageReport[],
  admissions: readonly PageAdmission[],
): SubmissionRecord[] {
  const rows: SubmissionRecord[] = [];
  pages.forEach((p, i) => {
    const a = admissions[i]!;
    if (a.taskId === null) return;
    const manifestError =
      (a.notAdmitted === 'refused' ? a.failure : undefined) ?? p.manifestError ?? (p.manifestKey === undefined ? 'no manifest key reported' : null);
    rows.push({
      taskId: a.taskId,
      orgId: input.crawl.orgId,
      submittedBy: input.crawl.submittedBy,
      crawlId: input.crawlId,
      url: p.url,
      manifestKey: p.manifestKey ?? null,
      manifestVersion: p.manifestKey !== undefined ? (p.manifestVersionId ?? null) : null,
      manifestError,
    });
  });
  return lastPerKey(rows, (s) => s.taskId);
}

/** The archives to register: one per task (the last report of it). */
export function capturesOf(admissions: readonly PageAdmission[], crawlId: string): { archive: ArchiveRecord; crawlId: string }[] {
  const captures = admissions.flatMap((a) => (a.archive !== null ? [{ archive: a.archive, crawlId }] : []));
  return lastPerKey(captures, (c) => c.archive.taskId);
}

/**
 * Pages the flow refused to fetch (the address they resolved to, a redirect hop, robots.txt's
 * host), links the capturer left out past its own cap (manifest.dropped.links), and what the
 * link choice refused.
 */
function refusalsOf(reads: readonly PageRead[], admissions: readonly PageAdmission[], chosen: readonly RefusalTally[]): RefusalTally[] {
  const refusals = new RefusalTallies();
  reads.forEach((r, i) => {
    if (r.read.kind === 'ok' && r.read.manifest.error?.type === ERROR_TYPE_ADDRESS_REFUSED)
      refusals.add(admissions[i]!.url, hostnameOf(admissions[i]!.url), 'fetch-refused');
  });
  reads.forEach((r, i) => {
    const dropped = r.read.kind === 'ok' ? (r.read.manifest as { dropped?: { links?: unknown } }).dropped?.links : undefined;
    if (typeof dropped === 'number' && Number.isInteger(dropped) && dropped > 0)
      refusals.add(admissions[i]!.url, hostnameOf(admissions[i]!.url), 'too-many-links', dropped);
  });
  for (const t of chosen) refusals.addTally(t);
  return refusals.toArray();
}

function notesOf(reads: readonly PageRead[], admissions: readonly PageAdmission[]): AdmissionPlan['notes'] {
  return {
    unreadable: reads.filter((r) => r.read.kind === 'unreadable').length,
    refused: admissions.filter((a) => a.notAdmitted === 'refused'),
    linksErrors: reads.flatMap((r, i) => (r.links === undefined && r.linksError !== undefined ? [{ url: admissions[i]!.url, error: r.linksError }] : [])),
  };
}

const hostnameOf = (url: string): string => new URL(url).hostname;

/** A page whose task id is in `foreign` is failed, without that task id, archive or links. */
export function withoutForeignTask(a: PageAdmission, foreign: ReadonlySet<string>): PageAdmission {
  if (a.taskId === null || !foreign.has(a.taskId)) return a;
  return { ...a, state: 'failed', skipReason: null, taskId: null, archive: null, links: null, notAdmitted: 'refused', failure: foreignTaskProblem(a.taskId) };
}

/** One item per key, the last one given for it (in the order of their first appearance). */
export function lastPerKey<T>(items: readonly T[], key: (item: T) => string): T[] {
  return [...new Map(items.map((i) => [key(i), i])).values()];
}

/** The pages of a report admission takes: those the level dispatched, the last report of a URL. */
export function admittedPages<T extends { url: string }>(reported: readonly T[], dispatched: { has(url: string): boolean }): T[] {
  return lastPerKey(reported, (p) => p.url).filter((p) => dispatched.has(p.url));
}
