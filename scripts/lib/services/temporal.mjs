// Temporal: the dev server (SQLite under .stack/temporal) and its Web UI, with the project's
// namespaces and search attributes.
import { mkdirSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { STACK_DIR, intSetting } from '../env.mjs';
import { resolveBinary } from '../tools.mjs';
import { httpOk } from './http.mjs';

// the Keyword search attributes of temporal.config.ts (SEARCH_ATTRIBUTES; this file must run
// before node_modules exist, so it cannot import that .ts file: test/unit/tools-pins.test.ts
// keeps the two in step)
export const SEARCH_ATTRIBUTES = ['CrawlId', 'CrawlOrg', 'CrawlState'];

/**
 * The dev server runs one history shard, and the history service reads each of its queues
 * (transfer, timer, visibility, outbound) at most `history.*ProcessorMaxPollRPS` times a second
 * per shard (default 20: sized for clusters of hundreds of shards). With one shard that cap is the
 * whole server's: every workflow task, activity task and fired timer waited for the next of 20
 * reads a second, some 35 ms each (measured: a report's signal reached admitLevel in 84 ms, two
 * such waits; 10 ms at 1,000). A cap, not a rate: an idle queue is not read more often.
 */
export const TEMPORAL_DYNAMIC_CONFIG = ['transfer', 'timer', 'visibility', 'outbound'].map((queue) => `history.${queue}ProcessorMaxPollRPS=1000`);

/** What every Temporal dev server of the project starts with: the stack's, and the benches' private ones. */
export function temporalDevServerFlags() {
  return [
    ...TEMPORAL_DYNAMIC_CONFIG.flatMap((kv) => ['--dynamic-config-value', kv]),
    ...SEARCH_ATTRIBUTES.flatMap((sa) => ['--search-attribute', `${sa}=Keyword`]),
  ];
}

// the apps' namespace, the tests' own and the capture tier's, all with the search attributes
function namespacesOf(env) {
  return [
    ...new Set(
      [env.CAPTURE_LEDGER_TEMPORAL_NAMESPACE || 'default', env.CAPTURE_LEDGER_TEMPORAL_TEST_NAMESPACE, env.CAPTURE_FLOW_TEMPORAL_NAMESPACE].filter(Boolean),
    ),
  ];
}

/** `temporal <args>` against the server at `address`: its stdout, or a throw. */
function temporalCli(tool, address) {
  return (args) =>
    execFileSync(tool.path, [...args, '--address', address, '--command-timeout', '5s'], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
      timeout: 10000,
    });
}

function missingSearchAttributes(cli, namespace) {
  const out = cli(['operator', 'search-attribute', 'list', '--namespace', namespace, '-o', 'json']);
  return SEARCH_ATTRIBUTES.filter((k) => !out.includes(`"${k}"`));
}

/** The last line of what a failed CLI call said. */
function lastLine(err) {
  return String(err.stderr ?? err.message)
    .trim()
    .split('\n')
    .pop();
}

function serverArgs(port, ui, namespaces) {
  const args = [
    'server',
    'start-dev',
    '--db-filename',
    STACK_DIR + 'temporal/temporal.db',
    '--ip',
    '127.0.0.1',
    '--port',
    String(port),
    '--ui-port',
    String(ui),
    '--log-level',
    'warn',
    ...temporalDevServerFlags(),
  ];
  for (const ns of namespaces) if (ns !== 'default') args.push('--namespace', ns);
  return args;
}

/** Creates `namespace` unless it exists, then registers its missing search attributes (30 s at most). */
async function ensureNamespace(cli, namespace, log) {
  try {
    cli(['operator', 'namespace', 'describe', '--namespace', namespace]);
  } catch {
    cli(['operator', 'namespace', 'create', '--namespace', namespace, '--retention', '72h']);
    log(`temporal: created namespace ${namespace}`);
  }
  const deadline = Date.now() + 30000;
  for (;;) {
    let missing;
    try {
      missing = missingSearchAttributes(cli, namespace);
    } catch (err) {
      // a namespace just created is unknown until the server's namespace cache refreshes
      missing = SEARCH_ATTRIBUTES;
      if (Date.now() > deadline) throw new Error(`namespace ${namespace}: ${lastLine(err)}`);
    }
    if (missing.length === 0) break;
    if (Date.now() > deadline) throw new Error(`namespace ${namespace}: search attributes ${missing.join(', ')} still missing after 30 s`);
    for (const name of missing) {
      try {
        cli(['operator', 'search-attribute', 'create', '--namespace', namespace, '--name', name, '--type', 'Keyword']);
      } catch {
        // not ready yet: tried again below
      }
    }
    await new Promise((r) => setTimeout(r, 1000));
  }
}

export function temporalSpec(env) {
  const port = intSetting('CAPTURE_LEDGER_TEMPORAL_PORT');
  const ui = intSetting('CAPTURE_LEDGER_TEMPORAL_UI_PORT');
  const tool = resolveBinary('temporal');
  const address = `127.0.0.1:${port}`;
  const namespaces = namespacesOf(env);
  const cli = temporalCli(tool, address);
  return {
    name: 'temporal',
    ports: [
      { setting: 'CAPTURE_LEDGER_TEMPORAL_PORT', port },
      { setting: 'CAPTURE_LEDGER_TEMPORAL_UI_PORT', port: ui },
    ],
    timeoutMs: 90000,
    tool,
    missing: 'temporal (npm run tools builds it into .tools/bin)',
    match: 'temporal',
    prepare() {
      mkdirSync(STACK_DIR + 'temporal', { recursive: true });
    },
    command() {
      return [tool.path, serverArgs(port, ui, namespaces)];
    },
    async health() {
      const page = await httpOk(`http://127.0.0.1:${ui}/`);
      if (page !== true) return `Web UI: ${page}`;
      try {
        const missing = missingSearchAttributes(cli, namespaces[0]);
        return missing.length ? `search attributes ${missing.join(', ')} not registered in namespace ${namespaces[0]} yet` : true;
      } catch (err) {
        return `temporal operator search-attribute list: ${lastLine(err)}`;
      }
    },
    // A server started before a namespace was configured (its SQLite file already existed, or
    // it was already running) gets it now, with the search attributes.
    async afterHealthy(log) {
      for (const namespace of namespaces) await ensureNamespace(cli, namespace, log);
    },
    url: `grpc ${address}, Web UI http://127.0.0.1:${ui}`,
  };
}
