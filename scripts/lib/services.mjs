// The services of the local stack, in start order. compose.yaml names the same services
// (test/unit/compose.test.ts checks it), so keep the two in step.
//
// Each service's spec is built in its own module under ./services/ (postgres.mjs, temporal.mjs,
// openfga.mjs, seaweedfs.mjs, opensearch.mjs), beside the constants and helpers only it uses;
// this module lists the services and looks their builders up.
import { loadEnv } from './env.mjs';
import { postgresSpec } from './services/postgres.mjs';
import { temporalSpec } from './services/temporal.mjs';
import { openfgaSpec } from './services/openfga.mjs';
import { seaweedfsSpec } from './services/seaweedfs.mjs';
import { opensearchSpec } from './services/opensearch.mjs';

export { SEARCH_ATTRIBUTES, TEMPORAL_DYNAMIC_CONFIG, temporalDevServerFlags } from './services/temporal.mjs';
export { OPENFGA_CACHE_FLAGS, datastoreEnv, openfgaRunArgs } from './services/openfga.mjs';

/**
 * name → description and spec builder (given the merged settings, loadEnv()), in start order;
 * `profile` services start only when that profile is asked for.
 */
export const SERVICES = [
  { name: 'postgres', what: 'Postgres (ledger + OpenFGA databases)', spec: postgresSpec },
  { name: 'temporal', what: 'Temporal dev server + Web UI', spec: temporalSpec },
  { name: 'openfga', what: 'OpenFGA (postgres datastore)', spec: openfgaSpec },
  { name: 'seaweedfs', what: 'SeaweedFS S3', spec: seaweedfsSpec },
  { name: 'opensearch', what: 'OpenSearch single node', profile: 'search', spec: opensearchSpec },
];

export const PROFILES = ['search'];

/**
 * Everything stack.mjs needs to run one service: the ports it takes, the command, how to tell
 * it is healthy, and what to do once it is.
 */
export function serviceSpec(name) {
  const service = SERVICES.find((s) => s.name === name);
  if (!service) throw new Error(`unknown service ${name}`);
  return service.spec(loadEnv());
}
