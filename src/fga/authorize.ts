// The questions the API asks OpenFGA. Single-object decisions (signing, starting a crawl,
// reports) run at HIGHER_CONSISTENCY; lists filter with one server-side BatchCheck.
import { ConsistencyPreference, type OpenFgaClient } from '@openfga/sdk';
import type { Identity } from '../domain/identity.ts';
import { archiveRef, checkContext, membershipTuples, orgRef, userRef } from './tuples.ts';

export async function canView(fga: OpenFgaClient, identity: Identity, archiveId: string): Promise<boolean> {
  const res = await fga.check(
    { user: userRef(identity.subject), relation: 'can_view', object: archiveRef(archiveId), contextualTuples: membershipTuples(identity), context: checkContext() },
    { consistency: ConsistencyPreference.HigherConsistency },
  );
  return res.allowed === true;
}

export async function canSubmit(fga: OpenFgaClient, identity: Identity, orgId: string): Promise<boolean> {
  const res = await fga.check(
    { user: userRef(identity.subject), relation: 'can_submit', object: orgRef(orgId), contextualTuples: membershipTuples(identity), context: checkContext() },
    { consistency: ConsistencyPreference.HigherConsistency },
  );
  return res.allowed === true;
}

/** Which of these archives the caller may view: one BatchCheck, not one Check per row. */
export async function viewableArchives(fga: OpenFgaClient, identity: Identity, archiveIds: string[]): Promise<Set<string>> {
  if (archiveIds.length === 0) return new Set();
  // batchCheck takes contextual tuples wrapped, unlike check.
  const contextualTuples = { tuple_keys: membershipTuples(identity) };
  const context = checkContext();
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
    { maxBatchSize: 50, maxParallelRequests: 4 },
  );
  const allowed = new Set<string>();
  for (const r of res.result) {
    if (r.error) throw new Error(`OpenFGA batch check failed: ${r.error.message ?? JSON.stringify(r.error)}`);
    if (r.allowed) allowed.add(archiveIds[Number(r.correlationId)]!);
  }
  return allowed;
}
