// The level's pure helpers, shared by the level workflow (deterministic: no Node, no I/O), the
// capture activities and the tests: where its keys go, when its pages must start and finish, its
// per-host notBefore, and the report's limits. HostLog is what a capture worker did to each host,
// kept in its memory for tests (GET /hosts); pacing itself is the slice workflow's.
import type { DispatchBody, PageReport } from '../domain/contract.ts';
import { levelPrefix as prefixOfLevel } from '../domain/level.ts';

export interface HostCapture {
  crawlId: string;
  depth: number;
  url: string;
  taskId: string;
  /** ms since the epoch */
  submittedAt: number;
  finishedAt: number;
  /** handed over behind another capture on this worker (slot lead), started as that one ended */
  behind?: true;
}

/** What the flow has done to each host (host with port), kept in memory for pacing and tests. */
export class HostLog {
  /** in the order last recorded to, oldest first */
  private readonly byHost = new Map<string, HostCapture[]>();
  private total = 0;

  /** captures kept per host (the newest); the last finish is what pacing needs */
  static readonly KEEP_PER_HOST = 5000;
  /** captures kept in all: a worker runs for days, and every capture it makes is recorded here;
   * past this, the hosts recorded to least recently are forgotten first */
  static readonly KEEP_TOTAL = 50_000;

  private readonly keep: { perHost: number; total: number };

  constructor(keep = { perHost: HostLog.KEEP_PER_HOST, total: HostLog.KEEP_TOTAL }) {
    this.keep = keep;
  }

  record(host: string, c: HostCapture): void {
    const list = this.byHost.get(host) ?? [];
    this.byHost.delete(host);
    list.push(c);
    this.total += 1;
    if (list.length > this.keep.perHost) this.total -= list.splice(0, list.length - this.keep.perHost).length;
    this.byHost.set(host, list);
    for (const [oldest, captures] of this.byHost) {
      if (this.total <= this.keep.total || oldest === host) break;
      this.byHost.delete(oldest);
      this.total -= captures.length;
    }
  }

  get(host: string): HostCapture[] {
    return [...(this.byHost.get(host) ?? [])];
  }

  all(): Record<string, HostCapture[]> {
    return Object.fromEntries([...this.byHost].map(([h, l]) => [h, [...l]]));
  }

  lastFinishes(): Record<string, number> {
    const out: Record<string, number> = {};
    for (const [h, l] of this.byHost) out[h] = Math.max(...l.map((c) => c.finishedAt));
    return out;
  }
}

/** Where the level's keys go (`${prefix}/<taskId>…`): the dispatch's artifactPrefix, else the
 * one a ledger that sends none expects. */
export function levelPrefix(d: Pick<DispatchBody, 'crawlId' | 'depth' | 'artifactPrefix'>): string {
  if (d.artifactPrefix !== undefined) return d.artifactPrefix.replace(/\/+$/, '');
  return prefixOfLevel(d.crawlId, d.depth).replace(/\/+$/, '');
}

/** A dispatch without a deadline (an older ledger) gets this long. */
export const DEFAULT_LEVEL_DEADLINE_MS = 30 * 60_000;

/**
 * When the level's pages must start and finish, from the dispatch's deadline: a margin (a quarter
 * of the time there is, at most 30 s) is kept for packaging and the report. `startBy`: a host
 * whose next allowed start (Crawl-delay, notBefore, per-host delay) is later has its pages
 * reported failed. `finishBy`: a visit still running then is torn down (half the margin is left).
 */
export function levelWindow(deadline: string | undefined, now: number): { startBy: number; finishBy: number } {
  const parsed = deadline === undefined ? Number.NaN : Date.parse(deadline);
  const end = Number.isNaN(parsed) ? now + DEFAULT_LEVEL_DEADLINE_MS : parsed;
  const margin = Math.min(30_000, Math.max(0, end - now) / 4);
  return { startBy: end - margin, finishBy: end - margin / 2 };
}

/** Parses notBefore (ISO 8601 per host) into ms; a value that is not a date is refused. */
export function parseNotBefore(nb: Record<string, string>): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [host, iso] of Object.entries(nb)) {
    const t = Date.parse(iso);
    if (Number.isNaN(t)) throw new Error(`notBefore[${JSON.stringify(host)}] is not a date: ${JSON.stringify(iso)}`);
    out[host] = t;
  }
  return out;
}

/** The report route refuses over-long strings, and a refused report loses the whole level. */
export const REPORT_LIMITS = { manifestError: 4096, finalUrl: 8192 } as const;

export function withinLimits(p: PageReport): PageReport {
  const out = { ...p };
  if (out.manifestError !== undefined && out.manifestError.length > REPORT_LIMITS.manifestError)
    out.manifestError = `${out.manifestError.slice(0, REPORT_LIMITS.manifestError - 1)}…`;
  if (out.finalUrl !== undefined && out.finalUrl.length > REPORT_LIMITS.finalUrl) delete out.finalUrl;
  return out;
}
