// The model id is pinned (CAPTURE_LEDGER_FGA_MODEL_ID): "a client that omits the id evaluates
// against whatever is newest, so editing the model would change every decision the moment it
// lands". Here a newer model lands in the API's own store, one under which an organization's
// members no longer view its archives, and the API goes on deciding by the pinned one until the
// variable is bumped. The API runs as `npm run api` runs it, its OpenFGA client built from the
// environment.
import { OpenFgaClient } from '@openfga/sdk';
import { transformer } from '@openfga/syntax-transformer';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Archive } from '../../src/db/types.ts';
import { devHeaders } from '../support/api.ts';
import { startApiProcess, stopApiProcesses } from '../support/api-process.ts';
import { modelJson } from '../support/fga.ts';
import { useHarness } from '../support/harness.ts';
import { drain, insertArchive, insertJob } from '../support/ledger.ts';

const h = useHarness({ api: false });
afterAll(stopApiProcesses);
let archive: Archive;
let newerModelId: string;

const MEMBER_PATH = ' or member from parent';

/** The project's model with can_view's organization-member path taken out. */
function modelWithoutMemberView(): ReturnType<typeof modelJson> {
  const dsl = transformer.transformJSONToDSL(modelJson() as never);
  const line = dsl.split('\n').find((l) => l.trim().startsWith('define can_view:'));
  expect(line).toContain(MEMBER_PATH);
  return transformer.transformDSLToJSONObject(dsl.replace(line!, line!.replace(MEMBER_PATH, ''))) as never;
}

// olivia is a member of acme and nothing more (alice, who submitted the crawl, owns it)
const oliviaOfAcme = { user: 'user:olivia', relation: 'member', object: 'organization:acme' };

/** can_view for olivia as a member of acme, against `client`'s model (its pinned one, or the newest when it pins none). */
async function oliviaMayView(client: OpenFgaClient): Promise<boolean> {
  const r = await client.check({ user: 'user:olivia', relation: 'can_view', object: `archive:${archive.id}`, contextualTuples: [oliviaOfAcme] });
  return r.allowed === true;
}

beforeAll(async () => {
  const job = await insertJob(h.tdb.db, { orgId: 'acme', submittedBy: 'alice' });
  archive = await insertArchive(h.tdb.db, { crawlId: job, bucket: h.bucket, url: 'https://example.test/pinned' });
  await drain(h.tdb.db, h.store.client);
  const unpinned = new OpenFgaClient({ apiUrl: h.store.apiUrl, storeId: h.store.storeId });
  newerModelId = (await unpinned.writeAuthorizationModel(modelWithoutMemberView())).authorization_model_id;
});

describe('a newer model in the store', () => {
  it('is what a client that pins no model id decides by: olivia, a member of acme, no longer views the archive', async () => {
    expect(newerModelId).not.toBe(h.store.modelId);
    expect(await oliviaMayView(new OpenFgaClient({ apiUrl: h.store.apiUrl, storeId: h.store.storeId }))).toBe(false);
    expect(await oliviaMayView(h.store.client)).toBe(true);
  });

  it('changes nothing the API decides: olivia still gets a signed URL and sees the archive in her list', async () => {
    const api = await startApiProcess(h, 'dev');
    const signed = await fetch(`${api.url}/api/archives/${archive.id}/url`, { method: 'POST', headers: devHeaders('olivia', ['acme']) });
    expect(signed.status).toBe(200);
    expect(await signed.json()).toMatchObject({ url: expect.stringContaining(archive.object_key), expiresIn: 300 });
    const list = await fetch(`${api.url}/api/archives`, { headers: devHeaders('olivia', ['acme']) });
    expect(list.status).toBe(200);
    expect(((await list.json()) as { id: string }[]).map((a) => a.id)).toContain(archive.id);
  });

  it('is what an API with the variable bumped decides by: olivia gets 404', async () => {
    const bumped = await startApiProcess(h, 'dev', { CAPTURE_LEDGER_FGA_MODEL_ID: newerModelId });
    const signed = await fetch(`${bumped.url}/api/archives/${archive.id}/url`, { method: 'POST', headers: devHeaders('olivia', ['acme']) });
    expect(signed.status).toBe(404);
  });
});
