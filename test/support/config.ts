import { loadConfig, type Config } from '../../src/config/env.ts';
import { loadProjectEnv } from './env.ts';

/**
 * The project's configuration with test overrides (a test database, a test store ...). Tests
 * that talk to OpenFGA pass their own store's ids; the placeholders only fill ids that are unset
 * (before fga:deploy has run) so that loading never fails on them.
 */
export function testConfig(overrides: Record<string, string | undefined> = {}): Config {
  loadProjectEnv();
  const env: Record<string, string | undefined> = { ...process.env, ...overrides };
  for (const name of ['CAPTURE_LEDGER_FGA_STORE_ID', 'CAPTURE_LEDGER_FGA_MODEL_ID']) {
    if (!env[name]?.trim()) env[name] = 'unset';
  }
  return loadConfig(env);
}
