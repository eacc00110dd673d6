import { loadConfig, type Config } from '../../src/config/env.ts';
import { loadProjectEnv } from './env.ts';

/**
 * What the capture flow may reach in tests: the test sites on 127.0.0.2-127.0.0.255
 * (test/support/site.ts), never 127.0.0.1, where the stack and the hostile listener live.
 */
export const TEST_SITES_ALLOW = ['127.0.0.2/31', '127.0.0.4/30', '127.0.0.8/29', '127.0.0.16/28', '127.0.0.32/27', '127.0.0.64/26', '127.0.0.128/25'].join(',');

/**
 * The project's configuration with test overrides (a test database, a test store ...). Tests
 * that talk to OpenFGA pass their own store's ids; the placeholders only fill ids that are unset
 * (before fga:deploy has run) so that loading never fails on them.
 */
export function testConfig(overrides: Record<string, string | undefined> = {}): Config {
  loadProjectEnv();
  const env: Record<string, string | undefined> = { ...process.env, CAPTURE_LEDGER_CAPTURE_ALLOW: TEST_SITES_ALLOW, ...overrides };
  for (const name of ['CAPTURE_LEDGER_FGA_STORE_ID', 'CAPTURE_LEDGER_FGA_MODEL_ID']) {
    if (!env[name]?.trim()) env[name] = 'unset';
  }
  return loadConfig(env);
}
