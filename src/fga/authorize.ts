// The questions the API asks OpenFGA. Single-object decisions (signing, starting a crawl,
// reports) run at HIGHER_CONSISTENCY, which bypasses OpenFGA's caches. Lists and search run at
// MINIMIZE_LATENCY and may be answered from the check-query and iterator caches (TTL 10 s):
// appearing in a list grants nothing, fetching still passes the strongly consistent check.
import { ConsistencyPreference, type OpenFgaClient } from '@openfga/sdk';
import type { Identity } from '../domain/identity.ts';
import { isUuid } from '../domain/uuid.ts';
import { checkEndpointOf, type CheckQuestion } from './check.ts';
import { archiveRef, checkContext, membershipTuples, orgRef, userRef } from './tuples.ts';

export async function canView(fga: OpenFgaClient, identity: Identity, archiveId: string): Promise<boolean> {
  return strongCheck(fga, identity, 'can_view', archiveRef(archiveId));
}

export async function canDelete(fga: OpenFgaClient, identity: Identity, archiveId: string): Promise<boolean> {
  return strongCheck(fga, identity, 'can_delete', archiveRef(archiveId));
}

export async function canSubmit(fga: OpenFgaClient, identity: Identity, orgId: string): Promise<boolean> {
  return strongCheck(fga, identity, 'can_submit', orgRef(orgId));
}

/**
 * One Check at HIGHER_CONSISTENCY: over the lean endpoint (check.ts), batched with the other
 * questions in flight, when the client allows it.
 */
async function strongCheck(fga: OpenFgaClient, identity: Identity, relation: string, object: string): Promise<boolean> {
  const question = checkQuestion(identity, relation, object);
  const lean = checkEndpointOf(fga);
  if (lean !== null) return lean.decide(question);
  const res = await fga.check(question, { consistency: ConsistencyPreference.HigherConsistency });
  return res.allowed === true;
}

/** The question a strong check asks: the caller, memberships as contextual tuples, the time now. */
export function checkQuestion(identity: Identity, relation: string, object: string): CheckQuestion {
  return { user: userRef(identity.subject), relation, object, contextualTuples: membershipTuples(identity), context: checkContext() };
}

/** How long a list's answer may be served from OpenFGA's caches (their TTL). */
export const LIST_CACHE_MS = 10_000;

/**
 * The context of a list question: the current time rounded down to the cache's TTL, so the same
 * question asked again within it is the same cache key (OpenFGA keys its check cache by context
 * too). A share that lapsed in the last few seconds may still be listed; signing asks with the
 * exact time.
 */
export function listContext(now = Date.now()): { current_time: string } {
  return checkContext(new Date(Math.floor(now / LIST_CACHE_MS) * LIST_CACHE_MS));
}

/** Which of these archives the caller may view: one BatchCheck, not one Check per row. */
export async function viewableArchives(fga: OpenFgaClient, identity: Identity, archiveIds: string[]): Promise<Set<string>> {
  if (archiveIds.length === 0) return new Set();
  // batchCheck takes contextual tuples wrapped, unlike check.
  const contextualTuples = { tuple_keys: membershipTuples(identity) };
  const context = listContext();
  const res = await fga.batchCheck(
    {
      checks: archiveIds.map((id, i) => ({
        user: userRef(identity.subject),
        relation: 'can_view',
        object: archiveRef(id),
        correlationId: String(i),
        contextualTuples,
        context,
      })),
    },
    { maxBatchSize: 50, maxParallelRequests: 4, consistency: ConsistencyPreference.MinimizeLatency },
  );
  const allowed = new Set<string>();
  for (const r of res.result) {
    if (r.error) throw new Error(`OpenFGA batch check failed: ${r.error.message ?? JSON.stringify(r.error)}`);
    if (r.allowed) allowed.add(archiveIds[Number(r.correlationId)]!);
  }
  return allowed;
}

/**
 * OpenFGA's ListObjects answers at most this many objects (its --list-objects-max-results
 * default): an answer this long may be cut, so it cannot be taken as the whole set.
 */
export const LIST_OBJECTS_MAX_RESULTS = 1000;
const LIST_OBJECTS_TRUST_MS = 2500;

/** What the caller can reach from the authorization side, or undefined when a list was cut. */
export interface ReachableObjects {
  /** crawl ids of the capture jobs the caller owns or is a member of */
  jobs: string[];
  /** archives shared with the caller directly (archive#viewer) */
  shared: string[];
}

/**
 * The capture jobs whose archives the caller may view (owner, or member through the job's
 * organization; ListObjects at MINIMIZE_LATENCY, so a new crawl may take the cache's 10 s to
 * appear) and the archives shared with them directly: three ListObjects, concurrently. Undefined
 * when any answer reached LIST_OBJECTS_MAX_RESULTS (possibly cut).
 */
export async function reachableObjects(fga: OpenFgaClient, identity: Identity): Promise<ReachableObjects | undefined> {
  const contextualTuples = membershipTuples(identity);
  const context = listContext();
  const user = userRef(identity.subject);
  const opts = { consistency: ConsistencyPreference.MinimizeLatency };
  const started = performance.now();
  const [owned, member, shared] = await Promise.all([
    fga.listObjects({ user, relation: 'owner', type: 'capture_job', contextualTuples, context }, opts),
    fga.listObjects({ user, relation: 'member', type: 'capture_job', contextualTuples, context }, opts),
    // Direct shares are one indexed read by user, cheap without the cache; asked fresh, a share
    // written or revoked a moment ago is listed (or not) as signing would decide.
    fga.listObjects({ user, relation: 'viewer', type: 'archive', contextualTuples, context }, { consistency: ConsistencyPreference.HigherConsistency }),
  ]);
  if ([owned, member, shared].some((r) => r.objects.length >= LIST_OBJECTS_MAX_RESULTS)) return undefined;
  // ListObjects answers what it found when its deadline (3 s by default) runs out, unmarked: an
  // answer that took that long may be partial too.
  if (performance.now() - started >= LIST_OBJECTS_TRUST_MS) return undefined;
  // ids the ledger could hold (uuids); a hand-written tuple naming anything else reaches nothing
  const ids = (refs: string[]): string[] => [...new Set(refs.map((r) => r.slice(r.indexOf(':') + 1).toLowerCase()).filter(isUuid))];
  return { jobs: ids([...owned.objects, ...member.objects]), shared: ids(shared.objects) };
}
