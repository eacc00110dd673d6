// OpenFGA: the authorization server, on its own Postgres database (CAPTURE_LEDGER_FGA_DATABASE_URL).
import { readFileSync } from 'node:fs';
import { intSetting } from '../env.mjs';
import { resolveBinary } from '../tools.mjs';
import { httpOk } from './http.mjs';

// List and search checks (MINIMIZE_LATENCY) may be answered from OpenFGA's caches for 10 s, as
// Auth0 FGA does; signing and can_submit ask at HIGHER_CONSISTENCY, which bypasses them.
// compose.yaml passes the same flags.
export const OPENFGA_CACHE_FLAGS = [
  '--check-query-cache-enabled=true',
  '--check-query-cache-ttl=10s',
  '--check-iterator-cache-enabled=true',
  '--check-iterator-cache-ttl=10s',
  '--list-objects-iterator-cache-enabled=true',
  '--list-objects-iterator-cache-ttl=10s',
];

/**
 * `openfga run` on a Postgres datastore, serving HTTP and gRPC on 127.0.0.1, with no metrics, no
 * playground and text logs: the stack's server, and the fault tests' private one
 * (test/support/private.ts), which add their own log level and caches. The datastore's URL, which
 * holds the role's password, goes in the environment (datastoreEnv), not on the command line
 * every local user can read in ps.
 */
export function openfgaRunArgs(httpPort, grpcPort) {
  return [
    'run',
    '--datastore-engine',
    'postgres',
    '--http-addr',
    `127.0.0.1:${httpPort}`,
    '--grpc-addr',
    `127.0.0.1:${grpcPort}`,
    '--metrics-enabled=false',
    '--datastore-metrics-enabled=false',
    '--playground-enabled=false',
    '--log-format',
    'text',
  ];
}

/** The environment an `openfga` command reads its datastore URL from. */
export function datastoreEnv(datastoreUri) {
  return { ...process.env, OPENFGA_DATASTORE_URI: datastoreUri };
}

/** The datastore URL a running openfga was started with (its environment); null when unreadable. */
function runningDatastore(pid) {
  try {
    const vars = readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0');
    return vars.find((v) => v.startsWith('OPENFGA_DATASTORE_URI='))?.slice('OPENFGA_DATASTORE_URI='.length) ?? '';
  } catch {
    return null;
  }
}

export function openfgaSpec(env) {
  const http = intSetting('CAPTURE_LEDGER_FGA_HTTP_PORT');
  const grpc = intSetting('CAPTURE_LEDGER_FGA_GRPC_PORT');
  const tool = resolveBinary('openfga');
  return {
    name: 'openfga',
    ports: [
      { setting: 'CAPTURE_LEDGER_FGA_HTTP_PORT', port: http },
      { setting: 'CAPTURE_LEDGER_FGA_GRPC_PORT', port: grpc },
    ],
    timeoutMs: 60000,
    tool,
    missing: 'openfga (npm run tools builds it into .tools/bin)',
    match: 'openfga',
    command() {
      return [tool.path, [...openfgaRunArgs(http, grpc), '--log-level', 'warn', ...OPENFGA_CACHE_FLAGS], datastoreEnv(env.CAPTURE_LEDGER_FGA_DATABASE_URL)];
    },
    // a running one started with another datastore URL (the role's password was generated since)
    // would open no new connection: it is restarted with today's
    staleConfig(rec) {
      const running = runningDatastore(rec.pid);
      return running === null || running === env.CAPTURE_LEDGER_FGA_DATABASE_URL ? null : 'its datastore URL (CAPTURE_LEDGER_FGA_DATABASE_URL) changed';
    },
    health: () => httpOk(`http://127.0.0.1:${http}/healthz`, (b) => b.includes('SERVING')),
    url: `http://127.0.0.1:${http}`,
  };
}
