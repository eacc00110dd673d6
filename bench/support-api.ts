// Shared by the API benchmarks: a fresh migrated database and OpenFGA store, the API as its own
// process (`src/api/main.ts`, exactly as `npm run api` runs it) on a free loopback port, a closed
// loop of concurrent callers, and latency summaries. Identity is the real path by default: Bearer
// JWTs from a dev issuer started here (discovery and JWKS fetched by the API as in production);
// `identity: 'dev'` trusts the dev headers instead.
import { spawn, type ChildProcess } from 'node:child_process';
import http from 'node:http';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';
import { createAppClients, type AppDeps } from '../src/api/deps.ts';
import { ORGANIZATIONS_HEADER, SUBJECT_HEADER } from '../src/api/identity.ts';
import { startIssuer, type RunningIssuer } from '../src/issuer/issuer.ts';
import { createTestStore, type TestStore } from '../test/support/fga.ts';
import { round } from './support-figures.ts';
import { stopProcess } from './support-process.ts';
import { benchConfig, createBenchDatabase, percentile, type BenchDatabase } from './support-crawl.ts';

const ROOT = fileURLToPath(new URL('../', import.meta.url));

export interface ApiBench {
  bench: BenchDatabase;
  store: TestStore;
  /** the same database, store and bucket the API process uses, for fixtures */
  deps: AppDeps;
  url: string;
  /** the request headers that make a caller this subject in these organizations */
  headersFor(subject: string, organizations: string[]): Promise<Record<string, string>>;
  close(): Promise<void>;
}

/** Characters of the API's output kept for an error. */
const API_OUTPUT_KEPT = 8000;

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

/** The API process's environment: this bench's database and store, Bearer JWTs from `issuer` or
 * the dev headers without one, no crawls, on `port`. */
function apiEnv(bench: BenchDatabase, store: TestStore, issuer: RunningIssuer | undefined, port: number): Record<string, string> {
  return {
    ...(process.env as Record<string, string>),
    CAPTURE_LEDGER_DATABASE_URL: bench.url,
    CAPTURE_LEDGER_FGA_STORE_ID: store.storeId,
    CAPTURE_LEDGER_FGA_MODEL_ID: store.modelId,
    CAPTURE_LEDGER_OIDC_ISSUER: issuer?.url ?? '',
    CAPTURE_LEDGER_OIDC_AUDIENCE: issuer?.audience ?? '',
    CAPTURE_LEDGER_DEV_IDENTITY: issuer === undefined ? '1' : '',
    CAPTURE_LEDGER_CRAWL_WEBHOOK_URL: '',
    CAPTURE_LEDGER_CRAWL_WEBHOOK_TOKEN: '',
    CAPTURE_LEDGER_API_HOST: '127.0.0.1',
    CAPTURE_LEDGER_API_PORT: String(port),
  };
}

interface ApiProcess {
  child: ChildProcess;
  /** the last API_OUTPUT_KEPT characters of its stdout and stderr */
  said(): string;
}

/** `src/api/main.ts` in a child process under `nodeArgs`, its output kept for an error. */
function spawnApi(nodeArgs: string[], env: Record<string, string>): ApiProcess {
  const child: ChildProcess = spawn(process.execPath, [...nodeArgs, 'src/api/main.ts'], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  // what the API said last (its log is on stdout), for the error when it does not start
  let said = '';
  const keep = (d: Buffer): void => void (said = (said + d.toString()).slice(-API_OUTPUT_KEPT));
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  return { child, said: () => said };
}

/** Polls the API's /healthz at `url` until it answers ok; throws with what the API said if it exits or a minute passes. */
async function waitForHealthz(api: ApiProcess, url: string): Promise<void> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (api.child.exitCode !== null) throw new Error(`bench api exited ${api.child.exitCode}: ${api.said()}`);
    const ok = await fetch(`${url}/healthz`)
      .then((r) => r.ok)
      .catch(() => false);
    if (ok) break;
    if (Date.now() > deadline) throw new Error(`bench api did not start: ${api.said()}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** `npm run api` in a child process with its own database and store; no crawls. */
export async function startBenchApi(opts: { nodeArgs?: string[]; identity?: 'jwt' | 'dev' } = {}): Promise<ApiBench> {
  const base = benchConfig();
  const [bench, store] = await Promise.all([createBenchDatabase(base.databaseUrl), createTestStore()]);
  const port = await freePort();
  const issuer: RunningIssuer | undefined = (opts.identity ?? 'jwt') === 'jwt' ? await startIssuer({ port: 0 }) : undefined;
  const api = spawnApi(opts.nodeArgs ?? [], apiEnv(bench, store, issuer, port));
  const url = `http://127.0.0.1:${port}`;
  await waitForHealthz(api, url);
  const config = benchConfig({
    CAPTURE_LEDGER_DATABASE_URL: bench.url,
    CAPTURE_LEDGER_FGA_STORE_ID: store.storeId,
    CAPTURE_LEDGER_FGA_MODEL_ID: store.modelId,
  });
  const deps: AppDeps = { config, db: bench.db, fga: store.client, ...createAppClients(config) };
  return {
    bench,
    store,
    deps,
    url,
    async headersFor(subject, organizations) {
      if (issuer === undefined) return { [SUBJECT_HEADER]: subject, [ORGANIZATIONS_HEADER]: organizations.join(',') } as Record<string, string>;
      return { authorization: `Bearer ${await issuer.mint({ subject, organizations, ttlSeconds: 3600 })}` };
    },
    async close() {
      // up to 15 s to drain, then SIGKILL
      await stopProcess(api.child, 15_000);
      deps.s3.destroy();
      await issuer?.close();
      await bench.drop();
    },
  };
}

export interface LoadResult {
  requests: number;
  concurrency: number;
  seconds: number;
  perSecond: number;
  p50Ms: number;
  p99Ms: number;
  errors: number;
}

/** `requests` calls of `fn` from `concurrency` callers, each starting its next call when the last ends. */
export async function closedLoop(requests: number, concurrency: number, fn: () => Promise<boolean>): Promise<LoadResult> {
  const latencies: number[] = [];
  let next = 0;
  let errors = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < requests) {
        next++;
        const t = performance.now();
        const ok = await fn().catch(() => false);
        latencies.push(performance.now() - t);
        if (!ok) errors++;
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  return {
    requests,
    concurrency,
    seconds: round(seconds, 2),
    perSecond: round(requests / seconds, 0),
    p50Ms: round(percentile(latencies, 50), 2),
    p99Ms: round(percentile(latencies, 99), 2),
    errors,
  };
}

/**
 * A POST with no body over node:http with keep-alive (`sockets` connections), the client the lean
 * OpenFGA check uses too, so an API bench and its bare side pay the same client cost.
 */
export function keepAlivePost(
  sockets: number,
): ((url: string, headers: Record<string, string>) => Promise<{ status: number; body: string }>) & { close(): void } {
  const agent = new http.Agent({ keepAlive: true, maxSockets: sockets });
  const post = (url: string, headers: Record<string, string>) =>
    new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = http.request(url, { method: 'POST', agent, headers: { ...headers, 'content-length': 0 } }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
        res.on('error', reject);
      });
      req.on('error', reject);
      req.end();
    });
  return Object.assign(post, { close: () => agent.destroy() });
}
