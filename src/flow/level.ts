// Captures one dispatched level, paced per host (src/domain/pacing.ts), and builds the level
// report. Per page: robots.txt first (Disallow → skipped, nothing captured; a Crawl-delay longer
// than perHostDelayMs takes over), then the visit — submittedAt when it starts, finishedAt when
// the host is done with it — then packaging and upload, which happen off the host's clock.
import { setTimeout as sleep } from 'node:timers/promises';
import type { DispatchBody, LevelReportBody, PageReport } from '../domain/contract.ts';
import { hostOf } from '../domain/crawl.ts';
import { Pacer, type Started } from '../domain/pacing.ts';
import type { WaczSigner } from '../domain/wacz/write.ts';
import type { CaptureBrowser } from './browser/launch.ts';
import { InFlightLimit, packageCapture, visitPage, writeCapture } from './capture.ts';
import type { Fetcher } from './fetcher.ts';
import { DEFAULT_DEADLINE_MS, extraDelayMs, matches, type FlowKnobs } from './knobs.ts';
import type { LevelSnapshot } from './heartbeat.ts';
import { earlierCaptures, pageTaskId } from './resume.ts';
import type { RobotsCache } from './robots-cache.ts';
import type { ArtifactStore } from './store.ts';

export interface HostCapture {
  crawlId: string;
  depth: number;
  url: string;
  taskId: string;
  /** ms since the epoch */
  submittedAt: number;
  finishedAt: number;
}

/** What the flow has done to each host (host with port), kept in memory for pacing and tests. */
export class HostLog {
  private readonly byHost = new Map<string, HostCapture[]>();

  /** captures kept per host (the newest); the last finish is what pacing needs */
  static readonly KEEP_PER_HOST = 5000;

  record(host: string, c: HostCapture): void {
    const list = this.byHost.get(host) ?? [];
    list.push(c);
    if (list.length > HostLog.KEEP_PER_HOST) list.splice(0, list.length - HostLog.KEEP_PER_HOST);
    this.byHost.set(host, list);
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

export interface LevelDeps {
  store: ArtifactStore;
  robots: RobotsCache;
  hostLog: HostLog;
  knobs: FlowKnobs;
  userAgent: string;
  software: string;
  signer?: WaczSigner;
  log: (line: string) => void;
  /** the flow's Chromium; every capture gets a fresh context in it */
  browser: CaptureBrowser;
  /** every request of a capture goes through it */
  fetcher: Fetcher;
  /** the level's heartbeat, told how to read the level's state */
  heartbeat?: { watch(snapshot: () => LevelSnapshot): void };
  /** true once the flow is killed (tests): no further page starts and nothing more is written */
  stopped?: () => boolean;
}

/** Where the level's keys go (`${prefix}/<taskId>…`): the dispatch's artifactPrefix, else the
 * one a ledger that sends none expects. */
export function levelPrefix(d: Pick<DispatchBody, 'crawlId' | 'depth' | 'artifactPrefix'>): string {
  if (d.artifactPrefix !== undefined) return d.artifactPrefix.replace(/\/+$/, '');
  return `captures/${d.crawlId}/${d.depth}`;
}

/** A dispatch without a deadline (an older ledger) gets this long. */
export const DEFAULT_LEVEL_DEADLINE_MS = 30 * 60_000;
/** Node's timers fire at once past this. */
const MAX_TIMER_MS = 2 ** 31 - 1;

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

export async function captureLevel(d: DispatchBody, deps: LevelDeps): Promise<LevelReportBody> {
  const { knobs } = deps;
  // a level dispatched again: what an earlier attempt captured is reported from its manifests,
  // and its finishes count for the spacing
  const earlier = await earlierCaptures(d, levelPrefix(d), deps.store, deps.log);
  const finishes = deps.hostLog.lastFinishes();
  for (const [i, r] of earlier) {
    const host = hostOf(d.pages[i]!.url);
    if (r.finishedAt !== undefined) finishes[host] = Math.max(finishes[host] ?? 0, Date.parse(r.finishedAt));
  }
  const pacer = new Pacer<number>({
    perHostDelayMs: d.perHostDelayMs,
    hostParallelism: d.hostParallelism,
    notBefore: parseNotBefore(d.notBefore),
    lastFinish: finishes,
    crawlDelayMs: deps.robots.knownCrawlDelays(),
  });
  d.pages.forEach((p, i) => {
    if (!earlier.has(i)) pacer.add(hostOf(p.url), i);
  });
  const results: PageReport[] = new Array(d.pages.length);
  for (const [i, r] of earlier) results[i] = r;
  deps.heartbeat?.watch(() => ({
    pagesTotal: d.pages.length,
    pagesDone: results.filter((r) => r !== undefined).length,
    pagesInFlight: pacer.running,
    hosts: pacer.snapshot().map((h) => ({ ...h, nextAllowedAt: h.nextAllowedAt === null ? null : new Date(h.nextAllowedAt).toISOString() })),
  }));
  const uploads: Promise<void>[] = [];
  // captures packaged and uploading at once: their bodies are held in memory until written
  const uploading = new InFlightLimit(2 * d.hostParallelism);
  const prefix = levelPrefix(d);
  /** per host, this level's last finish: reported with the delay kept, for the ledger's notBefore */
  const lastFinish = new Map<string, number>();

  const { startBy, finishBy } = levelWindow(d.deadline, Date.now());
  const tooLate = (host: string): string => `${host} cannot start before the level's deadline: its next capture may start at ${new Date(pacer.readyAt(host)).toISOString()} (Crawl-delay, notBefore or the per-host delay), pages had to start by ${new Date(startBy).toISOString()}`;
  /** a page whose host cannot start in time: reported failed with the reason, nothing fetched */
  const expire = ({ host, item: i }: Pick<Started<number>, 'host' | 'item'>): void => {
    results[i] = { url: d.pages[i]!.url, status: 'failed', manifestError: tooLate(host) };
    pacer.release(host);
  };

  const slot = async ({ host, item: i }: Started<number>): Promise<void> => {
    const page = d.pages[i]!;
    let ended = false;
    try {
      const rules = await deps.robots.get(page.url);
      if (rules.crawlDelayMs !== undefined) pacer.setCrawlDelay(host, rules.crawlDelayMs);
      if (!rules.isAllowed(page.url)) {
        results[i] = { url: page.url, status: 'skipped', skipReason: 'robots' };
        deps.log(`skip ${page.url}: robots.txt${rules.disallowAll ? ` (${rules.disallowAll})` : ''}`);
        ended = true;
        pacer.release(host);
        return;
      }
      // a Crawl-delay learnt just now may push this host's next submit later
      // (a timer may fire a millisecond early by Date.now(): wait until the clock says so)
      if (pacer.readyAt(host) > startBy) {
        deps.log(`fail ${page.url}: ${tooLate(host)}`);
        ended = true;
        expire({ host, item: i });
        return;
      }
      for (let wait = pacer.readyAt(host) - Date.now(); wait > 0; wait = pacer.readyAt(host) - Date.now()) await sleep(Math.min(wait, MAX_TIMER_MS));
      if (deps.stopped?.()) {
        ended = true;
        pacer.release(host);
        return;
      }

      // derived, not random: a re-dispatch finds this page's manifest under the same key
      const taskId = pageTaskId(d.crawlId, d.depth, page.url);
      const submittedAt = Date.now();
      // the host's clock stops when the page has been read (visit.hostDoneAt); the slot is held
      // while the page is rendered, so no more than hostParallelism pages are open at once
      const visit = await visitPage(deps.browser, page.url, {
        userAgent: deps.userAgent,
        fetcher: deps.fetcher,
        formats: d.formats,
        extraMs: extraDelayMs(knobs, page.url),
        deadlineMs: Math.max(1000, Math.floor(Math.min(knobs.deadlineMs ?? DEFAULT_DEADLINE_MS, finishBy - Date.now()))),
        injectFailure: matches(knobs.fail, page.url),
      });
      const finishedAt = visit.hostDoneAt;
      ended = true;
      pacer.finish(host, finishedAt, finishedAt - submittedAt);
      lastFinish.set(host, Math.max(lastFinish.get(host) ?? 0, finishedAt));
      deps.hostLog.record(host, { crawlId: d.crawlId, depth: d.depth, url: page.url, taskId, submittedAt, finishedAt });
      await uploading.acquire();

      const base: PageReport = { url: page.url, status: 'failed', taskId, submittedAt: new Date(submittedAt).toISOString(), finishedAt: new Date(finishedAt).toISOString() };
      uploads.push(
        (async () => {
          const packaged = await packageCapture(visit, { taskId, url: page.url, follow: page.follow, formats: d.formats, prefix, software: deps.software, startedAt: new Date(submittedAt), finishedAt: new Date(finishedAt), userAgent: deps.userAgent, ...(deps.signer && d.signing ? { signer: deps.signer } : {}) }, deps.store.bucket);
          if (packaged.finalUrl !== undefined) base.finalUrl = packaged.finalUrl;
          const lostManifest = matches(knobs.manifestError, page.url);
          if (deps.stopped?.()) return;
          try {
            await writeCapture(packaged, deps.store, { skipManifest: lostManifest });
          } catch (err) {
            results[i] = { ...base, status: 'failed', manifestError: (err as Error).message };
            deps.log(`capture ${page.url}: ${(err as Error).message}`);
            return;
          }
          if (lostManifest) {
            results[i] = { ...base, status: 'failed', manifestError: 'the capturer did not say where it wrote the manifest (test knob "manifestError")' };
            return;
          }
          const succeeded = packaged.manifest.status === 'succeeded';
          const status = succeeded && !matches(knobs.reportFailed, page.url) ? 'captured' : 'failed';
          results[i] = { ...base, status, manifestKey: packaged.manifestKey };
          deps.log(`${status} ${page.url}${packaged.manifest.error ? ` (${packaged.manifest.error.type}: ${packaged.manifest.error.message})` : ''} → ${packaged.manifestKey}`);
        })()
          .catch((err: unknown) => {
            results[i] = { ...base, status: 'failed', manifestError: `packaging failed: ${(err as Error).message}` };
          })
          .finally(() => uploading.release()),
      );
    } catch (err) {
      // nothing above should throw; if it does, the page is failed and the slot is freed
      results[i] = { url: page.url, status: 'failed', manifestError: `capture flow error: ${(err as Error).message}` };
      if (!ended) pacer.release(host);
    }
  };

  await new Promise<void>((resolve) => {
    let timer: NodeJS.Timeout | undefined;
    const pump = (): void => {
      if (timer !== undefined) clearTimeout(timer);
      timer = undefined;
      if (deps.stopped?.()) {
        if (pacer.running === 0) resolve();
        return;
      }
      for (const s of pacer.take(Date.now())) void slot(s).finally(pump);
      if (pacer.done) return resolve();
      const wake = pacer.nextWakeAt();
      if (wake !== undefined && wake > startBy) {
        // every host still waiting wakes too late for the deadline: their pages fail now
        for (const s of pacer.take(wake)) {
          expire(s);
          deps.log(`fail ${d.pages[s.item]!.url}: ${tooLate(s.host)}`);
        }
        queueMicrotask(pump);
        return;
      }
      if (wake !== undefined) timer = setTimeout(pump, Math.min(MAX_TIMER_MS, Math.max(0, wake - Date.now())));
    };
    pump();
  });
  await Promise.all(uploads);
  // the delay kept per host (Crawl-delay included): a flow restarted before the next level has
  // forgotten it, the ledger has not
  const hosts = [...lastFinish].map(([host, at]) => ({ host, delayMs: Math.round(pacer.delayFor(host)), lastFinishedAt: new Date(at).toISOString() }));
  return { depth: d.depth, pages: results.map(withinLimits), ...(hosts.length > 0 ? { hosts } : {}) };
}

/** The report route refuses over-long strings, and a refused report loses the whole level. */
export const REPORT_LIMITS = { manifestError: 4096, finalUrl: 8192 } as const;

export function withinLimits(p: PageReport): PageReport {
  const out = { ...p };
  if (out.manifestError !== undefined && out.manifestError.length > REPORT_LIMITS.manifestError) out.manifestError = `${out.manifestError.slice(0, REPORT_LIMITS.manifestError - 1)}…`;
  if (out.finalUrl !== undefined && out.finalUrl.length > REPORT_LIMITS.finalUrl) delete out.finalUrl;
  return out;
}
