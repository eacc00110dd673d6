import { OpenFgaClient } from '@openfga/sdk';
import type { Config } from '../config/env.ts';

/** Every client pins the model id: a client without one evaluates against whatever is newest. */
export function createFgaClient(fga: Config['fga']): OpenFgaClient {
  return new OpenFgaClient({ apiUrl: fga.apiUrl, storeId: fga.storeId, authorizationModelId: fga.modelId });
}
