// planAdmission a page at a time, so the write stage can start while the level is still read
// (src/ledger/admit-level.ts). Pages are added as their reads finish, in any order; what is ready
// to write is handed out in chunks:
//   - a page's own rows (its admission and capture_submissions row) need only its reads, except
//     for pages whose task id the level names more than once: those wait for finish(), together,
//     so the last report of a task wins as it does in the whole plan;
//   - the next level's candidates, in the order chosen: each follow page's links are chosen once
//     every page before it in the report is added (the choice depends on the order), up to the
//     page budget known before the reads plus CUT_ROWS_KEPT.
// finish() gives exactly what planAdmission gives for the same reads.
import type { PageAdmission } from './admission.ts';
import {
  admissionOf,
  assemblePlan,
  CUT_ROWS_KEPT,
  followPageOf,
  linkSelectorOf,
  slotsOf,
  submissionsOf,
  type AdmissionPlan,
  type NextLevelPlan,
  type PageRead,
  type PlanInput,
  type SubmissionRecord,
} from './admission-plan.ts';
import type { LinkSelector } from './links.ts';

/**
 * Page rows handed to the write stage at a time while the level is read. Each chunk is a handful
 * of statements (submissions, archives, tuples, page states) whose own cost is spread over its rows:
 * at 10,000 pages the writes took 86 µs of Postgres CPU a page in chunks of 1,000, 97 in chunks of
 * 250. Smaller levels are still written while read: the chunks shrink with what is unread.
 */
export const PAGE_ROWS_CHUNK = 1000;
/** Next-level candidates handed to the write stage at a time while the level is read. */
export const CANDIDATE_CHUNK = 500;
/**
 * Near the level's end the chunks shrink with the pages still unread, down to this share of a
 * whole chunk: what is written after the last read is one small chunk, not up to a whole one
 * (measured at 1,000 pages: a last chunk of 250 pages' rows took 30–70 ms after the reads, some
 * 5% of the admission), while most of the level is still written in whole chunks.
 */
export const LAST_CHUNK_SHARE = 1 / 16;

/** The share of a whole chunk handed out now: all of one while more than one is still to read; then as much of one as is unread, no less than LAST_CHUNK_SHARE. */
export function chunkShare(unread: number, chunkPages: number = PAGE_ROWS_CHUNK): number {
  return Math.min(1, Math.max(LAST_CHUNK_SHARE, unread / chunkPages));
}

/** Some pages' own rows, ready to write: `indexes` into the level's pages, index for index with `admissions`. */
export interface PageRows {
  indexes: number[];
  admissions: PageAdmission[];
  submissions: SubmissionRecord[];
}

export interface ReadyRows {
  pages: PageRows | null;
  candidates: NextLevelPlan['candidates'];
}

export class AdmissionPlanner {
  private readonly reads: (PageRead | undefined)[];
  private readonly admissions: (PageAdmission | undefined)[];
  private readonly sharesTask: boolean[];
  private readonly selector: LinkSelector | null;
  private readonly candidateLimit: number;
  private readonly input: Omit<PlanInput, 'reads'>;
  private readonly chunks: { pages: number; candidates: number };
  private pending: number[] = [];
  private nextToChoose = 0;
  private handedOut = 0;
  private added = 0;

  constructor(input: Omit<PlanInput, 'reads'>, chunks = { pages: PAGE_ROWS_CHUNK, candidates: CANDIDATE_CHUNK }) {
    this.input = input;
    this.chunks = chunks;
    const n = input.pages.length;
    this.reads = new Array<PageRead | undefined>(n);
    this.admissions = new Array<PageAdmission | undefined>(n);
    const uses = new Map<string, number>();
    for (const p of input.pages) if (p.taskId !== undefined) uses.set(p.taskId, (uses.get(p.taskId) ?? 0) + 1);
    this.sharesTask = input.pages.map((p) => p.taskId !== undefined && uses.get(p.taskId)! > 1);
    this.selector = input.expand === null ? null : linkSelectorOf(input);
    this.candidateLimit = slotsOf(input) + CUT_ROWS_KEPT;
  }

  /** Page `i` (of input.pages) has been read. */
  add(i: number, read: PageRead): void {
    if (this.reads[i] !== undefined) throw new Error(`page ${i} was added twice`);
    this.reads[i] = read;
    this.added += 1;
    this.admissions[i] = admissionOf(this.input, this.input.pages[i]!, read.read);
    if (!this.sharesTask[i]) this.pending.push(i);
    for (; this.nextToChoose < this.reads.length && this.reads[this.nextToChoose] !== undefined; this.nextToChoose++) {
      const links = this.reads[this.nextToChoose]!.links;
      if (links !== undefined) this.selector?.add(followPageOf(this.admissions[this.nextToChoose]!, links));
    }
  }

  /** What is ready to write in whole chunks; the rest waits for more pages or for finish(). */
  ready(): ReadyRows {
    const share = chunkShare(this.reads.length - this.added, this.chunks.pages);
    return {
      pages: this.pending.length >= Math.ceil(this.chunks.pages * share) ? this.takePages(this.pending.splice(0)) : null,
      candidates: this.candidatesSoFar() - this.handedOut >= Math.ceil(this.chunks.candidates * share) ? this.takeCandidates() : [],
    };
  }

  /** Every page added: the whole plan, and the rows not handed out yet. */
  finish(): { plan: AdmissionPlan; rest: ReadyRows } {
    const missing = this.reads.findIndex((r) => r === undefined);
    if (missing !== -1) throw new Error(`page ${missing} was not added`);
    const reads = this.reads as PageRead[];
    const admissions = this.admissions as PageAdmission[];
    const last = this.pending.splice(0).concat(this.sharesTask.flatMap((shares, i) => (shares ? [i] : [])));
    const rest = { pages: last.length > 0 ? this.takePages(last) : null, candidates: this.takeCandidates() };
    return { plan: assemblePlan({ ...this.input, reads }, admissions, this.selector?.result() ?? null), rest };
  }

  private takePages(indexes: number[]): PageRows {
    const admissions = indexes.map((i) => this.admissions[i]!);
    const pages = indexes.map((i) => this.input.pages[i]!);
    return { indexes, admissions, submissions: submissionsOf(this.input, pages, admissions) };
  }

  private candidatesSoFar(): number {
    return Math.min(this.selector?.candidatesSoFar.length ?? 0, this.candidateLimit);
  }

  private takeCandidates(): NextLevelPlan['candidates'] {
    const upto = this.candidatesSoFar();
    const rows = this.selector?.candidatesSoFar.slice(this.handedOut, upto) ?? [];
    this.handedOut = Math.max(this.handedOut, upto);
    return rows;
  }
}
