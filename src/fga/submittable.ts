// The organizations a caller may submit for, in one question that does not depend on any row:
// a route can ask it at the same time as it reads the row, so "no such crawl" and "not yours"
// take the same path and the same time. HIGHER_CONSISTENCY, as every can_submit decision.
import { ConsistencyPreference, type OpenFgaClient } from '@openfga/sdk';
import type { Identity } from '../domain/identity.ts';
import { checkContext, membershipTuples, userRef } from './tuples.ts';

const ORG_PREFIX = 'organization:';

export async function submittableOrganizations(fga: OpenFgaClient, identity: Identity): Promise<Set<string>> {
  const res = await fga.listObjects(
    { user: userRef(identity.subject), relation: 'can_submit', type: 'organization', contextualTuples: membershipTuples(identity), context: checkContext() },
    { consistency: ConsistencyPreference.HigherConsistency },
  );
  return new Set(res.objects.filter((o) => o.startsWith(ORG_PREFIX)).map((o) => o.slice(ORG_PREFIX.length)));
}
