// Start the API (and the dev issuer) in-process for integration tests, on 127.0.0.1 port 0,
// against a test database and a test OpenFGA store.
//
//   const tdb = await createTestDatabase(); const store = await createTestStore();
//   const issuer = await startTestIssuer();
//   const api = await startTestApi({ tdb, store, identity: { oidc: issuer } });
//   await fetch(`${api.url}/api/me`, { headers: await issuer.auth('alice', ['acme']) });
//   await api.close(); await issuer.close();
import type { FastifyInstance } from 'fastify';
import type { Config } from '../../src/config/env.ts';
import { buildApp } from '../../src/api/app.ts';
import { closeAppClients, createAppClients, type AppDeps } from '../../src/api/deps.ts';
import type { IdentityResolver } from '../../src/api/identity.ts';
import { startIssuer, type MintRequest, type RunningIssuer } from '../../src/issuer/issuer.ts';
import { testConfig } from './config.ts';
import type { TestDatabase } from './db.ts';
import type { TestStore } from './fga.ts';

/** The capture flow's client secret in tests: the test issuers and the flows' configuration share it. */
export const TEST_FLOW_CLIENT_SECRET = 'test-flow-client-secret-0123456789abcdef';

export type TestIdentity = 'none' | 'dev' | { oidc: { url: string; audience?: string }; devAlsoSet?: boolean };

export interface TestApiOptions {
  tdb: TestDatabase;
  store: TestStore;
  /** default 'dev' */
  identity?: TestIdentity;
  /** extra environment overrides for loadConfig */
  env?: Record<string, string | undefined>;
  /** replace the resolver outright */
  resolver?: IdentityResolver;
  /** extra deps (e.g. temporal) */
  deps?: Partial<AppDeps>;
  /** default: a free one (an API started again on the port of one that stopped keeps its URLs) */
  port?: number;
}

export interface TestApi {
  url: string;
  app: FastifyInstance;
  deps: AppDeps;
  config: Config;
  close(): Promise<void>;
}

export function identityEnv(identity: TestIdentity): Record<string, string> {
  if (identity === 'none') return { CAPTURE_LEDGER_OIDC_ISSUER: '', CAPTURE_LEDGER_DEV_IDENTITY: '' };
  if (identity === 'dev') return { CAPTURE_LEDGER_OIDC_ISSUER: '', CAPTURE_LEDGER_DEV_IDENTITY: '1' };
  return {
    CAPTURE_LEDGER_OIDC_ISSUER: identity.oidc.url,
    CAPTURE_LEDGER_OIDC_AUDIENCE: identity.oidc.audience ?? 'capture-ledger',
    CAPTURE_LEDGER_DEV_IDENTITY: identity.devAlsoSet ? '1' : '',
    CAPTURE_LEDGER_FLOW_CLIENT_SECRET: TEST_FLOW_CLIENT_SECRET,
  };
}

/** The settings a test API runs with, over the project's: the test database and store, the chosen identity. */
export function testApiEnv(opts: Pick<TestApiOptions, 'tdb' | 'store' | 'identity' | 'env'>): Record<string, string | undefined> {
  return {
    CAPTURE_LEDGER_DATABASE_URL: opts.tdb.url,
    CAPTURE_LEDGER_FGA_API_URL: opts.store.apiUrl,
    CAPTURE_LEDGER_FGA_STORE_ID: opts.store.storeId,
    CAPTURE_LEDGER_FGA_MODEL_ID: opts.store.modelId,
    ...identityEnv(opts.identity ?? 'dev'),
    ...opts.env,
  };
}

/** The configuration a test API runs with (testApiEnv). */
export function testApiConfig(opts: Pick<TestApiOptions, 'tdb' | 'store' | 'identity' | 'env'>): Config {
  return testConfig(testApiEnv(opts));
}

export async function startTestApi(opts: TestApiOptions): Promise<TestApi> {
  const config = testApiConfig(opts);
  const deps: AppDeps = { config, db: opts.tdb.db, fga: opts.store.client, ...createAppClients(config), ...opts.deps };
  const app = await buildApp(deps, { logger: process.env.CAPTURE_LEDGER_TEST_LOG ? { level: 'info' } : false, identity: opts.resolver });
  const address = await app.listen({ host: '127.0.0.1', port: opts.port ?? 0 });
  return {
    url: address,
    app,
    deps,
    config,
    async close() {
      await app.close();
      await closeAppClients(deps);
    },
  };
}

/** Dev-identity headers for fetch. */
export function devHeaders(subject: string, organizations: string[] = []): Record<string, string> {
  const h: Record<string, string> = { 'x-capture-ledger-subject': subject };
  if (organizations.length > 0) h['x-capture-ledger-organizations'] = organizations.join(',');
  return h;
}

export interface TestIssuer extends RunningIssuer {
  /** mint a token and return {authorization: 'Bearer …'} */
  auth(subject: string, organizations?: string[], extra?: Omit<MintRequest, 'subject' | 'organizations'>): Promise<Record<string, string>>;
}

/** An in-process dev issuer on 127.0.0.1 port 0, with a key of its own and the tests' flow secret. */
export async function startTestIssuer(opts: { audience?: string } = {}): Promise<TestIssuer> {
  const issuer = await startIssuer({ port: 0, host: '127.0.0.1', audience: opts.audience, flowClientSecret: TEST_FLOW_CLIENT_SECRET });
  return Object.assign(issuer, {
    async auth(subject: string, organizations: string[] = [], extra: Omit<MintRequest, 'subject' | 'organizations'> = {}) {
      return { authorization: `Bearer ${await issuer.mint({ subject, organizations, ...extra })}` };
    },
  });
}
