// One crawl, for a caller who may submit for its organization; otherwise the same 404 as for a
// crawl that does not exist. The row and the decision are asked concurrently (as the archive
// route does), so the answer's timing does not tell the two apart.
import type { OpenFgaClient } from '@openfga/sdk';
import type { Db } from '../db/connect.ts';
import type { Crawl } from '../db/types.ts';
import { NotFoundError } from './errors.ts';
import type { Identity } from '../domain/identity.ts';
import { submittableOrganizations } from '../fga/submittable.ts';
import { getCrawl } from '../store/crawls.ts';

export async function submittableCrawl(db: Db, fga: OpenFgaClient, identity: Identity, id: string): Promise<Crawl> {
  const [crawl, orgs] = await Promise.all([getCrawl(db, id.toLowerCase()), submittableOrganizations(fga, identity)]);
  if (crawl === undefined || !orgs.has(crawl.org_id)) throw new NotFoundError();
  return crawl;
}
