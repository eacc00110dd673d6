// While the flow works on a level it POSTs a heartbeat to the dispatch's heartbeatUrl every few
// seconds, with the same token and capability as the report: pages done, pages in flight, and
// per host queue length, in flight and next allowed start. The ledger re-dispatches a level whose
// heartbeats stop, so a flow that died mid-level costs a liveness window, not the level timeout.
// A lost or refused heartbeat is logged once per kind and never stops the capture.
import { CAPABILITY_HEADER, type DispatchBody, type HeartbeatBody } from '../domain/contract.ts';
import type { ReportAuth } from './report.ts';

export const DEFAULT_HEARTBEAT_INTERVAL_MS = 5_000;

/** What captureLevel knows about its level right now. */
export type LevelSnapshot = Omit<HeartbeatBody, 'depth'>;

export interface HeartbeatOptions {
  auth: ReportAuth;
  intervalMs: number;
  log: (line: string) => void;
}

export class LevelHeartbeat {
  private snapshot: (() => LevelSnapshot) | undefined;
  private timer: NodeJS.Timeout | undefined;
  private inFlight: Promise<void> | undefined;
  private readonly complaints = new Set<string>();
  private stopped = false;
  sent = 0;

  private readonly dispatch: DispatchBody;
  private readonly opts: HeartbeatOptions;

  constructor(dispatch: DispatchBody, opts: HeartbeatOptions) {
    this.dispatch = dispatch;
    this.opts = opts;
  }

  /** Starts beating (no-op when the dispatch names no heartbeatUrl: an older ledger). */
  start(): void {
    if (this.dispatch.heartbeatUrl === undefined || this.timer !== undefined || this.stopped) return;
    this.timer = setInterval(() => {
      if (this.inFlight === undefined) this.inFlight = this.beat().finally(() => (this.inFlight = undefined));
    }, this.opts.intervalMs);
    this.timer.unref();
  }

  /** captureLevel hands over how to read its state; until then a beat says only "alive". */
  watch(snapshot: () => LevelSnapshot): void {
    this.snapshot = snapshot;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer !== undefined) clearInterval(this.timer);
    this.timer = undefined;
    await this.inFlight;
  }

  body(): HeartbeatBody {
    const s = this.snapshot?.() ?? { pagesTotal: this.dispatch.pages.length, pagesDone: 0, pagesInFlight: 0, hosts: [] };
    return { depth: this.dispatch.depth, ...s };
  }

  private async beat(): Promise<void> {
    const url = this.dispatch.heartbeatUrl!;
    try {
      const headers = await this.opts.auth(this.dispatch.orgId);
      const res = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...headers, ...(this.dispatch.capability === undefined ? {} : { [CAPABILITY_HEADER]: this.dispatch.capability }) },
        body: JSON.stringify(this.body()),
        signal: AbortSignal.timeout(Math.max(1000, this.opts.intervalMs)),
      });
      await res.text().catch(() => '');
      if (res.ok) this.sent += 1;
      else this.complain(`answered ${res.status}`);
    } catch (err) {
      this.complain(`unreachable: ${(err as Error).message}`);
    }
  }

  private complain(what: string): void {
    if (this.complaints.has(what)) return;
    this.complaints.add(what);
    this.opts.log(`level ${this.dispatch.crawlId}/${this.dispatch.depth}: heartbeat ${what} (${this.dispatch.heartbeatUrl})`);
  }
}
