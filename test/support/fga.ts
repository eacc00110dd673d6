// Each test file gets its own OpenFGA store with the project's model, so tuples never leak
// between files.
import { readFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { OpenFgaClient } from '@openfga/sdk';
import { transformer } from '@openfga/syntax-transformer';
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

export async function createTestStore(): Promise<TestStore> {
  loadProjectEnv();
  const apiUrl = process.env.CAPTURE_LEDGER_FGA_API_URL!;
  const admin = new OpenFgaClient({ apiUrl });
  const store = await admin.createStore({ name: `test-${randomBytes(4).toString('hex')}` });
  const scoped = new OpenFgaClient({ apiUrl, storeId: store.id });
  const model = await scoped.writeAuthorizationModel(modelJson());
  const client = new OpenFgaClient({ apiUrl, storeId: store.id, authorizationModelId: model.authorization_model_id });
  return { apiUrl, storeId: store.id, modelId: model.authorization_model_id, client };
}
