// The questions the API asks OpenFGA. Single-object decisions (signing, starting a crawl,
// reports) run at HIGHER_CONSISTENCY, which bypasses OpenFGA's caches. Lists and search run at
// MINIMIZE_LATENCY and may be answered from the check-query and iterator caches (TTL 10 s):
// appearing in a list grants nothing, fetching still passes the strongly consistent check.
import { ConsistencyPreference, type OpenFgaClient } from '@openfga/sdk';
import type { Identity } from '../domain/identity.ts';
import { mapLimit } from '../domain/map-limit.ts';
import { checkEndpointOf, MAX_BATCH_CHECKS, type CheckEndpoint, type CheckQuestion } from './check.ts';
import { listContext } from './reach.ts';
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

/** Checks one BatchCheck asks at most (OpenFGA's --max-checks-per-batch-check default). */
const CHECKS_PER_BATCH = MAX_BATCH_CHECKS;
/** BatchChecks one question of viewableArchives sends at once. */
const BATCHES_AT_ONCE = 4;

/**
 * Which of these archives the caller may view (can_view at MINIMIZE_LATENCY, asked with the list
 * cache's context, so OpenFGA's caches may answer): the listing's and the search's one question.
 * BatchChecks of up to 50 over the lean endpoint (check.ts), which spares the SDK's request stack;
 * through the SDK when the client authenticates or pins no model. An item OpenFGA answers with an
 * error fails the whole question: a list never shows what it could not check.
 */
export async function viewableArchives(fga: OpenFgaClient, identity: Identity, archiveIds: string[]): Promise<Set<string>> {
  if (archiveIds.length === 0) return new Set();
  const lean = checkEndpointOf(fga);
  const answers = lean === null ? await viewableThroughSdk(fga, identity, archiveIds) : await viewableThroughLean(lean, identity, archiveIds);
  const allowed = new Set<string>();
  answers.forEach((a, i) => {
    if (a === undefined) throw new Error(`OpenFGA batch check failed for archive ${archiveIds[i]}`);
    if (a) allowed.add(archiveIds[i]!);
  });
  return allowed;
}

async function viewableThroughLean(lean: CheckEndpoint, identity: Identity, archiveIds: string[]): Promise<(boolean | undefined)[]> {
  const context = listContext();
  const questions = archiveIds.map((id) => ({ ...checkQuestion(identity, 'can_view', archiveRef(id)), context }));
  const batches: CheckQuestion[][] = [];
  for (let i = 0; i < questions.length; i += CHECKS_PER_BATCH) batches.push(questions.slice(i, i + CHECKS_PER_BATCH));
  return (await mapLimit(batches, BATCHES_AT_ONCE, (b) => lean.batchCheckCached(b))).flat();
}

/** Per archive its decision, or undefined where OpenFGA answered with an error or not at all. */
async function viewableThroughSdk(fga: OpenFgaClient, identity: Identity, archiveIds: string[]): Promise<(boolean | undefined)[]> {
  // batchCheck takes contextual tuples wrapped, unlike check.
  const contextualTuples = { tuple_keys: membershipTuples(identity) };
  const context = listContext();
  const user = userRef(identity.subject);
  const res = await fga.batchCheck(
    { checks: archiveIds.map((id, i) => ({ user, relation: 'can_view', object: archiveRef(id), correlationId: String(i), contextualTuples, context })) },
    { maxBatchSize: CHECKS_PER_BATCH, maxParallelRequests: BATCHES_AT_ONCE, consistency: ConsistencyPreference.MinimizeLatency },
  );
  const answers: (boolean | undefined)[] = archiveIds.map(() => undefined);
  for (const r of res.result) {
    if (r.error) throw new Error(`OpenFGA batch check failed: ${r.error.message ?? JSON.stringify(r.error)}`);
    answers[Number(r.correlationId)] = r.allowed === true;
  }
  return answers;
}
