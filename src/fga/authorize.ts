// The questions the API asks OpenFGA. Single-object decisions (signing, starting a crawl,
// reports) run at HIGHER_CONSISTENCY, which bypasses OpenFGA's caches. Lists and search run at
// MINIMIZE_LATENCY and may be answered from the check-query and iterator caches (TTL 10 s):
// appearing in a list grants nothing, fetching still passes the strongly consistent check.
import { ConsistencyPreference, type OpenFgaClient } from '@openfga/sdk';
import type { Identity } from '../domain/identity.ts';
import { mapLimit } from '../domain/map-limit.ts';
import { checkEndpointOf, MAX_BATCH_CHECKS, type CheckQuestion } from './check.ts';
import { listContext } from './reach.ts';
import { archiveRef, checkContext, membershipTuples, orgRef, userRef } from './tuples.ts';

// the caller's reach (reach.ts) is asked through here by the listing, as it always was
export { LIST_CACHE_MS, LIST_OBJECTS_MAX_RESULTS, listContext, reachableObjects, type ReachableObjects } from './reach.ts';

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

/** BatchChecks one question of viewableArchives sends at once. */
const BATCHES_AT_ONCE = 4;

/**
 * The same answer as viewableArchives, for the search, which asks it on every query beside its
 * ledger read: over the lean endpoint (check.ts, at MINIMIZE_LATENCY as the SDK's is asked) when
 * the client allows it, which spares the SDK's request stack on the search's path.
 */
export async function viewableAmong(fga: OpenFgaClient, identity: Identity, archiveIds: string[]): Promise<Set<string>> {
  const lean = checkEndpointOf(fga);
  if (lean === null || archiveIds.length === 0) return viewableArchives(fga, identity, archiveIds);
  const context = listContext();
  const questions = archiveIds.map((id) => ({ ...checkQuestion(identity, 'can_view', archiveRef(id)), context }));
  const batches: CheckQuestion[][] = [];
  for (let i = 0; i < questions.length; i += MAX_BATCH_CHECKS) batches.push(questions.slice(i, i + MAX_BATCH_CHECKS));
  const answers = (await mapLimit(batches, BATCHES_AT_ONCE, (b) => lean.batchCheckCached(b))).flat();
  const allowed = new Set<string>();
  answers.forEach((a, i) => {
    if (a === undefined) throw new Error(`OpenFGA batch check failed for archive ${archiveIds[i]}`);
    if (a) allowed.add(archiveIds[i]!);
  });
  return allowed;
}
