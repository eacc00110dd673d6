// What ties a level report to its dispatch (design.md "The webhook contract"), decided without
// I/O: where a level's artifacts must be, which manifest keys a report may name, how often a
// level may be reported. The capability itself (random bytes, digests, constant-time compare)
// lives in src/ledger/capability.ts.
import { CONTRACT_LIMITS, type HostReport, type Manifest, type PageReport } from './contract.ts';
import { hostOf } from './crawl.ts';

/** A task id becomes one path segment of a key: nothing that could climb out of the prefix. */
export function isSafeTaskId(taskId: string): boolean {
  return /^[A-Za-z0-9_-][A-Za-z0-9._-]*$/.test(taskId) && taskId !== '.' && taskId !== '..';
}

/** The only manifest key a page of the level may name. */
export function expectedManifestKey(prefix: string, taskId: string): string {
  return `${prefix}${taskId}.result.json`;
}

/**
 * True when `key` lies under `prefix` with no empty, '.' or '..' segment after it: object stores
 * differ in whether they normalise such paths, so none is accepted.
 */
export function isUnderPrefix(key: string, prefix: string): boolean {
  if (!prefix.endsWith('/') || !key.startsWith(prefix) || key.length === prefix.length) return false;
  return key
    .slice(prefix.length)
    .split('/')
    .every((seg) => seg !== '' && seg !== '.' && seg !== '..');
}

export interface MisplacedManifest {
  url: string;
  taskId: string | null;
  manifestKey: string;
  /** what the key had to be (null: the task id cannot be part of a key) */
  expected: string | null;
}

/** Pages of a report whose manifestKey is not exactly `<prefix><taskId>.result.json`. */
export function misplacedManifests(pages: readonly PageReport[], prefix: string): MisplacedManifest[] {
  const out: MisplacedManifest[] = [];
  for (const p of pages) {
    if (p.manifestKey === undefined) continue;
    const taskId = p.taskId ?? null;
    const expected = taskId !== null && isSafeTaskId(taskId) ? expectedManifestKey(prefix, taskId) : null;
    if (p.manifestKey !== expected) out.push({ url: p.url, taskId, manifestKey: p.manifestKey, expected });
  }
  return out;
}

/** Pages of a report naming a task id in `foreign` (one another crawl or level holds). */
export function pagesNamingTasks(pages: readonly PageReport[], foreign: ReadonlySet<string>): { url: string; taskId: string }[] {
  return pages.flatMap((p) => (p.taskId !== undefined && foreign.has(p.taskId) ? [{ url: p.url, taskId: p.taskId }] : []));
}

/** Why a page's task id is not admitted: another crawl or level holds it. */
export function foreignTaskProblem(taskId: string): string {
  return `task id ${JSON.stringify(taskId)} is on record for another crawl or level`;
}

/**
 * The prefix a stored manifest key implies: the key minus `<taskId>.result.json`. Null when the key
 * does not end that way (then nothing under it is trusted).
 */
export function prefixOfManifestKey(manifestKey: string, taskId: string): string | null {
  if (!isSafeTaskId(taskId)) return null;
  const tail = `${taskId}.result.json`;
  if (!manifestKey.endsWith(`/${tail}`)) return null;
  return manifestKey.slice(0, manifestKey.length - tail.length);
}

/**
 * Why a stored manifest key is not one of its own crawl's, or null when it is: the prefix it
 * implies must be one the crawl's levels were dispatched with or, for a crawl with no dispatch
 * on record, name the crawl as one of its segments.
 */
export function crawlKeyProblem(row: { manifestKey: string; taskId: string; crawlId: string }, dispatchedPrefixes: readonly string[]): string | null {
  const prefix = prefixOfManifestKey(row.manifestKey, row.taskId);
  if (prefix === null) return `manifest key ${JSON.stringify(row.manifestKey)} is not <prefix>${row.taskId}.result.json`;
  const own = dispatchedPrefixes.length > 0 ? dispatchedPrefixes.includes(prefix) : prefix.split('/').includes(row.crawlId);
  return own ? null : `manifest key ${JSON.stringify(row.manifestKey)} is not under a prefix of crawl ${row.crawlId}`;
}

/**
 * Why a manifest's artifacts may not be registered, or null when they may: every artifact must be
 * in the configured bucket, under the level's prefix. A manifest naming anything else would have
 * the ledger sign URLs for objects the capture never wrote.
 */
export function artifactPlacementProblem(m: Pick<Manifest, 'artifacts'>, where: { bucket: string; prefix: string }): string | null {
  for (const a of m.artifacts) {
    if (a.bucket !== where.bucket)
      return `artifact ${JSON.stringify(a.key)} (${a.format}) is in bucket ${JSON.stringify(a.bucket)}, not ${JSON.stringify(where.bucket)}`;
    if (!isUnderPrefix(a.key, where.prefix)) return `artifact ${JSON.stringify(a.key)} (${a.format}) is not under ${JSON.stringify(where.prefix)}`;
  }
  return null;
}

/** The largest delay a host may be recorded with (an int4 of ms, about 24.8 days). */
export const MAX_RECORDED_DELAY_MS = CONTRACT_LIMITS.delayMs;

export interface HostRecord {
  host: string;
  delayMs: number;
  lastFinishedAt: Date | null;
}

/**
 * What a level's report says about each host the level was dispatched to: the delay kept (the
 * flow's word, never below perHostDelayMs) and the last finish (the later of the flow's word and
 * the pages' own finishedAt). Hosts the level never touched are ignored, and so is a finish later
 * than `now` (plus a minute of clock skew): it would hold the host back for no reason.
 */
export function hostsToRecord(
  report: { hosts?: readonly HostReport[]; pages: readonly Pick<PageReport, 'url' | 'finishedAt'>[] },
  levelHosts: ReadonlySet<string>,
  perHostDelayMs: number,
  now: Date,
): HostRecord[] {
  const latest = now.getTime() + 60_000;
  const out = new Map<string, HostRecord>();
  const entry = (host: string): HostRecord => {
    let e = out.get(host);
    if (e === undefined) {
      e = { host, delayMs: Math.min(Math.max(0, perHostDelayMs), MAX_RECORDED_DELAY_MS), lastFinishedAt: null };
      out.set(host, e);
    }
    return e;
  };
  const later = (e: HostRecord, iso: string | undefined): void => {
    const t = iso === undefined ? NaN : Date.parse(iso);
    if (!Number.isNaN(t) && t <= latest && (e.lastFinishedAt === null || t > e.lastFinishedAt.getTime())) e.lastFinishedAt = new Date(t);
  };
  for (const h of report.hosts ?? []) {
    if (!levelHosts.has(h.host)) continue;
    const e = entry(h.host);
    if (Number.isFinite(h.delayMs)) e.delayMs = Math.min(Math.max(e.delayMs, Math.floor(h.delayMs)), MAX_RECORDED_DELAY_MS);
    later(e, h.lastFinishedAt);
  }
  for (const p of report.pages) {
    if (p.finishedAt === undefined) continue;
    let host: string;
    try {
      host = hostOf(p.url);
    } catch {
      continue;
    }
    if (levelHosts.has(host)) later(entry(host), p.finishedAt);
  }
  return [...out.values()];
}
