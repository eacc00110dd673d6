// The level reports the crawl workflow has been signalled and not yet admitted. Signals are
// at-least-once, so a reportId seen before is dropped; a level reported more than once before it
// is admitted is admitted once, from its newest report (the one the store holds).
//
// Deterministic and dependency-free: it runs inside the workflow.
export interface LevelReported {
  depth: number;
  /** crawl_level_reports.report_id: signals are at-least-once, this deduplicates them */
  reportId: string;
}

export class ReportQueue {
  private readonly queued: LevelReported[] = [];
  private readonly seen = new Set<string>();

  /** Queues a signalled report; false when its reportId was seen before (a duplicate signal). */
  offer(report: LevelReported): boolean {
    if (this.seen.has(report.reportId)) return false;
    this.seen.add(report.reportId);
    this.queued.push(report);
    return true;
  }

  has(depth: number): boolean {
    return this.queued.some((r) => r.depth === depth);
  }

  /** Removes every queued report of `depth` and returns the newest, or undefined when there is none. */
  take(depth: number): LevelReported | undefined {
    let last: LevelReported | undefined;
    for (let i = 0; i < this.queued.length;) {
      if (this.queued[i]!.depth === depth) last = this.queued.splice(i, 1)[0];
      else i += 1;
    }
    return last;
  }

  /** Depths below `current` with a queued report (re-reports of levels already admitted), in arrival order, each once. */
  earlierDepths(current: number): number[] {
    const out: number[] = [];
    for (const r of this.queued) if (r.depth < current && !out.includes(r.depth)) out.push(r.depth);
    return out;
  }

  get size(): number {
    return this.queued.length;
  }
}
