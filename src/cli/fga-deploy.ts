// npm run fga:deploy [-- --store-name <name>] [-- --env-local <path>]
// Creates the store `capture-ledger` when it does not exist, writes fga/model.fga unless the
// store's newest model already says the same, prints the two ids to pin and writes them into
// .env.local (never .env). Runs before those ids exist, so it reads only the OpenFGA URL.
import { basename, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { ConfigError, loadFgaApiUrl } from '../config/env.ts';
import { deployModel, ENV_LOCAL, STORE_NAME, writeEnvFile } from '../fga/deploy.ts';

function fail(message: string): never {
  console.error(`fga:deploy: ${message}`);
  process.exit(1);
}

let args: { 'store-name'?: string; 'env-local'?: string };
try {
  args = parseArgs({ options: { 'store-name': { type: 'string' }, 'env-local': { type: 'string' } }, strict: true }).values;
} catch (err) {
  fail(`${(err as Error).message}\nusage: npm run fga:deploy [-- --store-name <name>] [-- --env-local <path>]`);
}
const envLocal = resolve(args['env-local'] ?? ENV_LOCAL);
if (basename(envLocal) === '.env') fail(`refusing to write ${envLocal}: .env is the settings template's copy; the ids go into .env.local`);

let apiUrl: string;
try {
  apiUrl = loadFgaApiUrl();
} catch (err) {
  if (err instanceof ConfigError) fail(err.message);
  throw err;
}

try {
  const r = await deployModel({ apiUrl, storeName: args['store-name'] ?? STORE_NAME });
  console.error(
    `store ${args['store-name'] ?? STORE_NAME} ${r.createdStore ? 'created' : 'already there'}; model ${r.createdModel ? 'written' : 'unchanged, newest model reused'}`,
  );
  const values = { CAPTURE_LEDGER_FGA_STORE_ID: r.storeId, CAPTURE_LEDGER_FGA_MODEL_ID: r.modelId };
  for (const [k, v] of Object.entries(values)) console.log(`${k}=${v}`);
  writeEnvFile(envLocal, values);
  console.error(`wrote both into ${envLocal}`);
} catch (err) {
  fail(`OpenFGA at ${apiUrl}: ${(err as Error).message}`);
}
