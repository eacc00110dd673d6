// What a search may read: the capture jobs OpenFGA lists for the caller and the archives shared
// with them directly. Jobs are asked at MINIMIZE_LATENCY, which OpenFGA may answer from its
// caches for LIST_CACHE_MS; this keeps that answer for the same window (listContext's), so a
// caller's searches within it ask once, and concurrent ones share the question. Shares are asked
// fresh on every search, as the listing asks them: a share written or revoked a moment ago is
// found (or not) as signing would decide. Every hit shown still passes can_view; the reach only
// decides what is read.
import { ConsistencyPreference, type OpenFgaClient } from '@openfga/sdk';
import type { Identity } from '../domain/identity.ts';
import { isUuid } from '../domain/uuid.ts';
import { LIST_CACHE_MS, LIST_OBJECTS_MAX_RESULTS, listContext } from '../fga/authorize.ts';
import { membershipTuples, userRef } from '../fga/tuples.ts';

/** ListObjects answers what it found when its deadline runs out, unmarked (as in fga/authorize.ts): a slower answer may be partial. */
const LIST_OBJECTS_TRUST_MS = 2500;
/** Callers whose jobs one process keeps at most; past it the least recently asked goes first. */
const MAX_CACHED_CALLERS = 10_000;

type Listed = string[] | undefined;
interface CachedJobs {
  window: number;
  jobs: Promise<Listed>;
}

const cache = new WeakMap<OpenFgaClient, Map<string, CachedJobs>>();

/** ids the ledger could hold (uuids); a hand-written tuple naming anything else reaches nothing */
const idsOf = (refs: string[]): string[] => [...new Set(refs.map((r) => r.slice(r.indexOf(':') + 1).toLowerCase()).filter(isUuid))];

/** The capture jobs the caller owns or is a member of, kept for the rest of the list cache's window; undefined when a list may have been cut. */
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
  byCaller.delete(key);
  byCaller.set(key, { window, jobs });
  if (byCaller.size > MAX_CACHED_CALLERS) byCaller.delete(byCaller.keys().next().value!);
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

/** The archives shared with the caller directly (archive#viewer), asked fresh; undefined when the list may have been cut. */
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
