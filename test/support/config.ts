import { loadConfig, type Config } from '../../src/config/env.ts';
import { loadProjectEnv } from './env.ts';

/** The project's configuration with test overrides (a test database, a test store ...). */
export function testConfig(overrides: Record<string, string | undefined> = {}): Config {
  loadProjectEnv();
  return loadConfig({ CAPTURE_LEDGER_FGA_STORE_ID: 'unset', CAPTURE_LEDGER_FGA_MODEL_ID: 'unset', ...process.env, ...overrides });
}
