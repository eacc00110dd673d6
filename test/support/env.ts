// Tests read the settings the way every script does (scripts/lib/env.mjs, the one loader):
// .env.example, then .env, then .env.local, a later file winning, and a variable already in the
// real environment winning over all of them. The apps read only .env and .env.local (node's
// --env-file-if-exists), so a setting missing from .env is a default here and absent there.
//
// Tests run in their own Temporal namespace (CAPTURE_LEDGER_TEMPORAL_TEST_NAMESPACE, created with
// the search attributes by `npm run stack:up`), whatever CAPTURE_LEDGER_TEMPORAL_NAMESPACE says:
// nothing a test starts shows up in a developer's namespace.
import { ROOT, loadEnv } from '../../scripts/lib/env.mjs';

export { ROOT };

let loaded = false;
export function loadProjectEnv(): void {
  if (loaded) return;
  loaded = true;
  for (const [k, v] of Object.entries(loadEnv())) if (process.env[k] === undefined) process.env[k] = v;
  const testNamespace = process.env.CAPTURE_LEDGER_TEMPORAL_TEST_NAMESPACE;
  if (!testNamespace) throw new Error('CAPTURE_LEDGER_TEMPORAL_TEST_NAMESPACE is not set (.env.example declares it)');
  process.env.CAPTURE_LEDGER_TEMPORAL_NAMESPACE = testNamespace;
}
