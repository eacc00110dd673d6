// The caller's reach: what OpenFGA lists for them, asked by the search (to narrow its index
// read) and by the archive listing (to narrow its candidates). One service, one cache.
//
// Jobs are asked at MINIMIZE_LATENCY, which OpenFGA may answer from its caches for LIST_CACHE_MS;
// this keeps that answer for the same window (listContext's), so a caller's searches and listings
// within it ask once, and concurrent ones share the question. Shares are asked fresh every time:
// a share written or revoked a moment ago is found (or not) as signing would decide. The search
// reads by it and checks each hit (can_view); the listing takes it as OpenFGA's answer, for the
// archives whose parent tuple OpenFGA holds (store/archives.ts). Either way a list grants nothing.
import { ConsistencyPreference, type OpenFgaClient } from '@openfga/sdk';
import type { Identity } from '../domain/identity.ts';
import { isUuid } from '../domain/uuid.ts';
import { setRecent } from '../domain/recent.ts';
import { checkContext, membershipTuples, userRef } from './tuples.ts';

/** How long a list's answer may be served from OpenFGA's caches (their TTL). */
export const LIST_CACHE_MS = 10_000;

/**
 * OpenFGA's ListObjects answers at most this many objects (its --list-objects-max-results
 * default): an answer this long may be cut, so it cannot be taken as the whole set.
 */
export const LIST_OBJECTS_MAX_RESULTS = 1000;
/** ListObjects answers what it found when its deadline (3 s by default) runs out, unmarked: a slower answer may be partial. */
const LIST_OBJECTS_TRUST_MS = 2500;
/** Callers whose jobs one process keeps at most; past it the least recently asked goes first. */
const MAX_CACHED_CALLERS = 10_000;

/**
 * The context of a list question: the current time rounded down to the cache's TTL, so the same
 * question asked again within it is the same cache key (OpenFGA keys its check cache by context
 * too). A share that lapsed in the last few seconds may still be listed; signing asks with the
 * exact time.
 */
export function listContext(now = Date.now()): { current_time: string } {
  return checkContext(new Date(Math.floor(now / LIST_CACHE_MS) * LIST_CACHE_MS));
}

/** What the caller can reach from the authorization side. */
export interface ReachableObjects {
  /** crawl ids of the capture jobs the caller owns or is a member of */
  jobs: string[];
  /** archives shared with the caller directly (archive#viewer) */
  shared: string[];
}

/** ids, or undefined when a list may have been cut */
type Listed = string[] | undefined;
interface CachedJobs {
  window: number;
  jobs: Promise<Listed>;
}

const cache = new WeakMap<OpenFgaClient, Map<string, CachedJobs>>();

/** ids the ledger could hold (uuids); a hand-written tuple naming anything else reaches nothing */
const idsOf = (refs: string[]): string[] => [...new Set(refs.map((r) => r.slice(r.indexOf(':') + 1).toLowerCase()).filter(isUuid))];

/**
 * The capture jobs the caller owns or is a member of (through the job's organization), kept for
 * the rest of the list cache's window: a new crawl may take up to LIST_CACHE_MS to appear.
 */
export function reachableJobs(fga: OpenFgaClient, identity: Identity, now = Date.now()): Promise<Listed> {
  const byCaller = cache.get(fga) ?? new Map<string, CachedJobs>();
  cache.set(fga, byCaller);
  const key = JSON.stringify([identity.subject, [...identity.organizations].sort()]);
  const window = Math.floor(now / LIST_CACHE_MS);
  const kept = byCaller.get(key);
  if (kept !== undefined && kept.window === window) return kept.jobs;
  const jobs = listJobs(fga, identity, now);
  // a failed question is asked again next time, not kept
  jobs.catch(() => byCaller.get(key)?.jobs === jobs && byCaller.delete(key));
  setRecent(byCaller, key, { window, jobs }, MAX_CACHED_CALLERS);
  return jobs;
}

async function listJobs(fga: OpenFgaClient, identity: Identity, now: number): Promise<Listed> {
  const base = { user: userRef(identity.subject), type: 'capture_job', contextualTuples: membershipTuples(identity), context: listContext(now) };
  const opts = { consistency: ConsistencyPreference.MinimizeLatency };
  const started = performance.now();
  const answers = await Promise.all([fga.listObjects({ ...base, relation: 'owner' }, opts), fga.listObjects({ ...base, relation: 'member' }, opts)]);
  if (!trusted(answers, started)) return undefined;
  return idsOf(answers.flatMap((a) => a.objects));
}

/** The archives shared with the caller directly (archive#viewer), asked fresh (one indexed read by user, cheap without the cache). */
export async function sharedArchives(fga: OpenFgaClient, identity: Identity, now = Date.now()): Promise<Listed> {
  const started = performance.now();
  const answer = await fga.listObjects(
    { user: userRef(identity.subject), relation: 'viewer', type: 'archive', contextualTuples: membershipTuples(identity), context: listContext(now) },
    { consistency: ConsistencyPreference.HigherConsistency },
  );
  return trusted([answer], started) ? idsOf(answer.objects) : undefined;
}

/** An answer is whole unless it reached OpenFGA's cap or took as long as its deadline. */
function trusted(answers: { objects: string[] }[], started: number): boolean {
  return answers.every((a) => a.objects.length < LIST_OBJECTS_MAX_RESULTS) && performance.now() - started < LIST_OBJECTS_TRUST_MS;
}
