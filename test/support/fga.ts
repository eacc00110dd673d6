// Each test file gets its own OpenFGA store with the project's model, so tuples never leak
// between files.
import { readFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { OpenFgaClient } from '@openfga/sdk';
import { transformer } from '@openfga/syntax-transformer';
import type { CheckQuestion } from '../../src/fga/check.ts';
import { ROOT, loadProjectEnv } from './env.ts';

export function modelJson(): Parameters<OpenFgaClient['writeAuthorizationModel']>[0] {
  return transformer.transformDSLToJSONObject(readFileSync(ROOT + 'fga/model.fga', 'utf8')) as never;
}

export interface TestStore {
  apiUrl: string;
  storeId: string;
  modelId: string;
  client: OpenFgaClient;
}

/** A store with the project's model; named `test-…` unless told (test/support/fga-datastore.ts purges those of earlier runs). */
export async function createTestStore(name = `test-${randomBytes(4).toString('hex')}`): Promise<TestStore> {
  loadProjectEnv();
  const apiUrl = process.env.CAPTURE_LEDGER_FGA_API_URL!;
  const admin = new OpenFgaClient({ apiUrl });
  const store = await admin.createStore({ name });
  const scoped = new OpenFgaClient({ apiUrl, storeId: store.id });
  const model = await scoped.writeAuthorizationModel(modelJson());
  const client = new OpenFgaClient({ apiUrl, storeId: store.id, authorizationModelId: model.authorization_model_id });
  return { apiUrl, storeId: store.id, modelId: model.authorization_model_id, client };
}

/** The tuples every check test starts from: olga owns `job`, acme is its organization, `archive` is the job's. */
export function ownedArchiveTuples(job: string, archive: string) {
  return [
    { user: 'user:olga', relation: 'owner', object: job },
    { user: 'organization:acme', relation: 'parent', object: job },
    { user: job, relation: 'parent', object: archive },
  ];
}

/** A check for `user` whose organizations `orgs` go as contextual member tuples, at `now`. */
export function checkQuestion(user: string, relation: string, object: string, orgs: string[], now: string): CheckQuestion {
  return {
    user: `user:${user}`,
    relation,
    object,
    contextualTuples: orgs.map((o) => ({ user: `user:${user}`, relation: 'member', object: `organization:${o}` })),
    context: { current_time: now },
  };
}
