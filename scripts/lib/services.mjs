// The services of the local stack, in start order. compose.yaml names the same services
// (test/unit/compose.test.ts checks it), so keep the two in step.
import { chmodSync, chownSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { STACK_DIR, ROOT, intSetting, loadEnv } from './env.mjs';
import { resolveBinary, postgresBinDir, opensearchCommand } from './tools.mjs';
import { s3Request } from './s3.mjs';

/** name → description, in start order; `profile` services start only when that profile is asked for. */
export const SERVICES = [
  { name: 'postgres', what: 'Postgres (ledger + OpenFGA databases)' },
  { name: 'temporal', what: 'Temporal dev server + Web UI' },
  { name: 'openfga', what: 'OpenFGA (postgres datastore)' },
  { name: 'seaweedfs', what: 'SeaweedFS S3' },
  { name: 'opensearch', what: 'OpenSearch single node', profile: 'search' },
];

export const PROFILES = ['search'];

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
 * (test/support/private.ts), which add their own log level and caches.
 */
export function openfgaRunArgs(datastoreUri, httpPort, grpcPort) {
  return [
    'run',
    '--datastore-engine',
    'postgres',
    '--datastore-uri',
    datastoreUri,
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

const isRoot = () => process.getuid?.() === 0;

function urlParts(name) {
  const raw = loadEnv()[name] ?? process.env[name];
  const u = new URL(raw);
  return { user: decodeURIComponent(u.username), password: decodeURIComponent(u.password), database: u.pathname.slice(1), url: raw };
}

function sqlIdent(s) {
  return '"' + s.replaceAll('"', '""') + '"';
}
function sqlString(s) {
  return "'" + s.replaceAll("'", "''") + "'";
}

async function httpOk(url, pred = () => true) {
  const res = await fetch(url, { signal: AbortSignal.timeout(3000) });
  const body = await res.text();
  if (res.status !== 200) return `HTTP ${res.status} from ${url}: ${body.slice(0, 200)}`;
  return pred(body) ? true : `unexpected answer from ${url}: ${body.slice(0, 200)}`;
}

export function s3Settings() {
  const env = loadEnv();
  return {
    endpoint: env.CAPTURE_LEDGER_S3_ENDPOINT,
    region: env.CAPTURE_LEDGER_S3_REGION,
    accessKeyId: env.CAPTURE_LEDGER_S3_ACCESS_KEY_ID,
    secretAccessKey: env.CAPTURE_LEDGER_S3_SECRET_ACCESS_KEY,
    bucket: env.CAPTURE_LEDGER_S3_BUCKET,
  };
}

/** The capture workers' S3 key pair: it may put objects in the bucket, nothing else. */
export function captureWorkerS3Credentials() {
  const env = loadEnv();
  return { accessKeyId: env.CAPTURE_WORKER_S3_ACCESS_KEY_ID, secretAccessKey: env.CAPTURE_WORKER_S3_SECRET_ACCESS_KEY };
}

export const PUT_ONLY_S3_POLICY = 'capture-worker-put-objects';

/**
 * SeaweedFS's identities (its -s3.config file): the ledger's admin, and the capture workers'.
 * The capture identity has a policy, not legacy actions: SeaweedFS's "Write" action covers
 * DeleteObject as well as PutObject (its router checks Write for both), while an attached policy
 * is evaluated by S3 action, so s3:PutObject alone allows PUT and nothing else (GET, HEAD, LIST,
 * DELETE, multipart abort and tagging are other actions).
 */
export function seaweedIdentities(admin, worker, bucket) {
  if (!worker.accessKeyId || !worker.secretAccessKey)
    throw new Error('CAPTURE_WORKER_S3_ACCESS_KEY_ID and CAPTURE_WORKER_S3_SECRET_ACCESS_KEY must both be set (see .env.example)');
  if (worker.accessKeyId === admin.accessKeyId)
    throw new Error('CAPTURE_WORKER_S3_ACCESS_KEY_ID must differ from CAPTURE_LEDGER_S3_ACCESS_KEY_ID: the capture workers get a key of their own');
  const putOnly = { Version: '2012-10-17', Statement: [{ Effect: 'Allow', Action: ['s3:PutObject'], Resource: [`arn:aws:s3:::${bucket}/*`] }] };
  return {
    identities: [
      {
        name: admin.accessKeyId,
        credentials: [{ accessKey: admin.accessKeyId, secretKey: admin.secretAccessKey }],
        actions: ['Admin', 'Read', 'Write', 'List', 'Tagging'],
      },
      {
        name: 'capture-worker',
        credentials: [{ accessKey: worker.accessKeyId, secretKey: worker.secretAccessKey }],
        policyNames: [PUT_ONLY_S3_POLICY],
      },
    ],
    policies: [{ name: PUT_ONLY_S3_POLICY, content: JSON.stringify(putOnly) }],
  };
}

/**
 * Everything stack.mjs needs to run one service: the ports it takes, the command, how to tell
 * it is healthy, and what to do once it is.
 */
export function serviceSpec(name) {
  const env = loadEnv();
  switch (name) {
    case 'postgres': {
      const port = intSetting('CAPTURE_LEDGER_PG_PORT');
      const bin = postgresBinDir();
      const data = STACK_DIR + 'pg';
      const sock = STACK_DIR + 'pg-run';
      // runuser lives in /usr/sbin, which a root shell's PATH does not always hold
      const runuser = ['/usr/sbin/runuser', '/sbin/runuser'].find((p) => existsSync(p)) ?? 'runuser';
      const asPostgres = (cmd, args) => (isRoot() ? [runuser, ['-u', 'postgres', '--', cmd, ...args]] : [cmd, args]);
      // psql as the postgres superuser over the stack's socket, stopping at the first error
      const psqlCommand = (database, flags) =>
        asPostgres(`${bin}/psql`, ['-X', '-q', '-v', 'ON_ERROR_STOP=1', '-h', sock, '-p', String(port), '-U', 'postgres', '-d', database, ...flags]);
      const psql = (sql) => {
        const [c, a] = psqlCommand('postgres', ['-f', '-']);
        return execFileSync(c, a, { input: sql, encoding: 'utf8', stdio: ['pipe', 'pipe', 'pipe'], timeout: 30000 });
      };
      return {
        name,
        ports: [{ setting: 'CAPTURE_LEDGER_PG_PORT', port }],
        timeoutMs: 60000,
        stopSignal: 'SIGINT', // fast shutdown
        tool: bin ? { path: `${bin}/postgres`, source: bin } : null,
        missing: 'postgres (Debian package `postgresql`: apt-get install -y postgresql; .ci/run does it)',
        match: 'postgres',
        // runuser stays as a parent; the real server pid is in postmaster.pid
        realPid: () => Number(String(execFileSync('head', ['-1', data + '/postmaster.pid'])).trim()),
        prepare(log) {
          mkdirSync(STACK_DIR, { recursive: true });
          // the postgres user must traverse .stack, whoever created it first (the dev issuer
          // makes .stack/issuer with mode 0700, recursively)
          if (isRoot()) chmodSync(STACK_DIR, 0o755);
          for (const d of [data, sock]) {
            mkdirSync(d, { recursive: true, mode: 0o700 });
            if (isRoot()) chownSync(d, postgresUid(), postgresGid());
          }
          if (!existsSync(data + '/PG_VERSION')) {
            log('postgres: initdb ' + data);
            const [c, a] = asPostgres(`${bin}/initdb`, [
              '-D',
              data,
              '-U',
              'postgres',
              '--auth-local=trust',
              '--auth-host=scram-sha-256',
              '-E',
              'UTF8',
              '--locale=C.UTF-8',
            ]);
            execFileSync(c, a, { stdio: ['ignore', 'pipe', 'pipe'], timeout: 120000 });
          }
        },
        command() {
          return asPostgres(`${bin}/postgres`, [
            '-D',
            data,
            '-p',
            String(port),
            '-c',
            'listen_addresses=127.0.0.1',
            '-c',
            `unix_socket_directories=${sock}`,
            '-c',
            'max_connections=200',
            '-c',
            'fsync=off',
            '-c',
            'synchronous_commit=off',
            '-c',
            'full_page_writes=off',
            // how soon autovacuum sees a table's changes (default 1 min): OpenFGA's tuple table is
            // analyzed every 20,000 changed rows (scripts/lib/fga-migrate.mjs)
            '-c',
            'autovacuum_naptime=10s',
          ]);
        },
        async health() {
          const [c, a] = asPostgres(`${bin}/pg_isready`, ['-q', '-h', '127.0.0.1', '-p', String(port), '-d', 'postgres', '-U', 'postgres']);
          try {
            execFileSync(c, a, { stdio: 'ignore', timeout: 5000 });
            return true;
          } catch {
            return `pg_isready -h 127.0.0.1 -p ${port} says not ready`;
          }
        },
        async afterHealthy(log) {
          const ledger = urlParts('CAPTURE_LEDGER_DATABASE_URL');
          const fga = urlParts('CAPTURE_LEDGER_FGA_DATABASE_URL');
          const roles = new Map([
            [ledger.user, ledger.password],
            [fga.user, fga.password],
          ]);
          let sql = '';
          for (const [user, password] of roles) {
            sql += `SELECT format('CREATE ROLE %I', ${sqlString(user)}) WHERE NOT EXISTS (SELECT FROM pg_roles WHERE rolname = ${sqlString(user)})\\gexec\n`;
            // SUPERUSER: tests clone databases from a template (CREATE DATABASE ... TEMPLATE)
            sql += `ALTER ROLE ${sqlIdent(user)} WITH LOGIN SUPERUSER PASSWORD ${sqlString(password)};\n`;
          }
          for (const { database, user } of [ledger, fga]) {
            sql += `SELECT format('CREATE DATABASE %I OWNER %I', ${sqlString(database)}, ${sqlString(user)}) WHERE NOT EXISTS (SELECT FROM pg_database WHERE datname = ${sqlString(database)})\\gexec\n`;
          }
          psql(sql);
          log(`postgres: role ${[...roles.keys()].join(', ')}; databases ${ledger.database}, ${fga.database}`);
        },
        /** The ledger's outbox: tuples queued for OpenFGA, and those in the dead letter (0006). */
        outboxCounts() {
          const { database } = urlParts('CAPTURE_LEDGER_DATABASE_URL');
          const query = 'SELECT count(*) FILTER (WHERE dead_at IS NULL), count(*) FILTER (WHERE dead_at IS NOT NULL) FROM fga_outbox';
          const [c, a] = psqlCommand(database, ['-A', '-t', '-c', query]);
          const [queued, dead] = execFileSync(c, a, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], timeout: 10000 })
            .trim()
            .split('|')
            .map(Number);
          return { queued, dead };
        },
        url: `postgres://127.0.0.1:${port}`,
      };
    }
    case 'temporal': {
      const port = intSetting('CAPTURE_LEDGER_TEMPORAL_PORT');
      const ui = intSetting('CAPTURE_LEDGER_TEMPORAL_UI_PORT');
      const tool = resolveBinary('temporal');
      const address = `127.0.0.1:${port}`;
      // the apps' namespace, the tests' own and the capture tier's, all with the search attributes
      const namespaces = [
        ...new Set(
          [env.CAPTURE_LEDGER_TEMPORAL_NAMESPACE || 'default', env.CAPTURE_LEDGER_TEMPORAL_TEST_NAMESPACE, env.CAPTURE_FLOW_TEMPORAL_NAMESPACE].filter(Boolean),
        ),
      ];
      const cli = (args) =>
        execFileSync(tool.path, [...args, '--address', address, '--command-timeout', '5s'], {
          encoding: 'utf8',
          stdio: ['ignore', 'pipe', 'pipe'],
          timeout: 10000,
        });
      const missingSearchAttributes = (namespace) => {
        const out = cli(['operator', 'search-attribute', 'list', '--namespace', namespace, '-o', 'json']);
        return SEARCH_ATTRIBUTES.filter((k) => !out.includes(`"${k}"`));
      };
      return {
        name,
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
          return [tool.path, args];
        },
        async health() {
          const page = await httpOk(`http://127.0.0.1:${ui}/`);
          if (page !== true) return `Web UI: ${page}`;
          try {
            const missing = missingSearchAttributes(namespaces[0]);
            return missing.length ? `search attributes ${missing.join(', ')} not registered in namespace ${namespaces[0]} yet` : true;
          } catch (err) {
            return `temporal operator search-attribute list: ${String(err.stderr ?? err.message)
              .trim()
              .split('\n')
              .pop()}`;
          }
        },
        // A server started before a namespace was configured (its SQLite file already existed, or
        // it was already running) gets it now, with the search attributes.
        async afterHealthy(log) {
          for (const namespace of namespaces) {
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
                missing = missingSearchAttributes(namespace);
              } catch (err) {
                // a namespace just created is unknown until the server's namespace cache refreshes
                missing = SEARCH_ATTRIBUTES;
                if (Date.now() > deadline)
                  throw new Error(
                    `namespace ${namespace}: ${String(err.stderr ?? err.message)
                      .trim()
                      .split('\n')
                      .pop()}`,
                  );
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
        },
        url: `grpc ${address}, Web UI http://127.0.0.1:${ui}`,
      };
    }
    case 'openfga': {
      const http = intSetting('CAPTURE_LEDGER_FGA_HTTP_PORT');
      const grpc = intSetting('CAPTURE_LEDGER_FGA_GRPC_PORT');
      const tool = resolveBinary('openfga');
      return {
        name,
        ports: [
          { setting: 'CAPTURE_LEDGER_FGA_HTTP_PORT', port: http },
          { setting: 'CAPTURE_LEDGER_FGA_GRPC_PORT', port: grpc },
        ],
        timeoutMs: 60000,
        tool,
        missing: 'openfga (npm run tools builds it into .tools/bin)',
        match: 'openfga',
        command() {
          return [tool.path, [...openfgaRunArgs(env.CAPTURE_LEDGER_FGA_DATABASE_URL, http, grpc), '--log-level', 'warn', ...OPENFGA_CACHE_FLAGS]];
        },
        health: () => httpOk(`http://127.0.0.1:${http}/healthz`, (b) => b.includes('SERVING')),
        url: `http://127.0.0.1:${http}`,
      };
    }
    case 'seaweedfs': {
      const s3 = intSetting('CAPTURE_LEDGER_S3_PORT');
      // SeaweedFS's internal servers take the next ports after S3 (and +10000 for their gRPC).
      const master = s3 + 1;
      const volume = s3 + 2;
      const filer = s3 + 3;
      const tool = resolveBinary('weed');
      const dir = STACK_DIR + 'seaweed';
      const cfg = s3Settings();
      const identitiesFile = dir + '/s3.json';
      // an identity makes SeaweedFS verify every signature (with none it allows everything)
      const identities = JSON.stringify(seaweedIdentities(cfg, captureWorkerS3Credentials(), cfg.bucket), null, 2) + '\n';
      const internal = (port, what) => ({ setting: `CAPTURE_LEDGER_S3_PORT + ${port - s3} (${what})`, port });
      return {
        name,
        ports: [
          { setting: 'CAPTURE_LEDGER_S3_PORT', port: s3 },
          internal(master, 'master'),
          internal(volume, 'volume'),
          internal(filer, 'filer'),
          { setting: 'CAPTURE_LEDGER_S3_PORT + 10000 (s3 gRPC)', port: s3 + 10000 },
          { ...internal(master + 10000, 'master gRPC') },
          { ...internal(volume + 10000, 'volume gRPC') },
          { ...internal(filer + 10000, 'filer gRPC') },
        ],
        timeoutMs: 90000,
        tool,
        missing: 'weed (npm run tools builds it into .tools/bin)',
        match: 'weed',
        prepare() {
          mkdirSync(dir + '/data', { recursive: true });
          writeFileSync(identitiesFile, identities, { mode: 0o600 });
        },
        // SeaweedFS reads its -s3.config file once, at start: a running one whose file (written
        // when it started) differs from today's identities is restarted with the new file
        staleConfig() {
          const running = existsSync(identitiesFile) ? readFileSync(identitiesFile, 'utf8') : '';
          return running === identities ? null : `its S3 identities changed (${identitiesFile.slice(ROOT.length)})`;
        },
        command() {
          return [
            tool.path,
            [
              'server',
              `-dir=${dir}/data`,
              '-ip=127.0.0.1',
              '-ip.bind=127.0.0.1',
              `-master.port=${master}`,
              `-volume.port=${volume}`,
              `-filer.port=${filer}`,
              '-master.volumeSizeLimitMB=256',
              // no anonymous statistics to the outside; no Iceberg / Lance listeners
              '-master.telemetry=false',
              // one master: after a restart it re-elects itself in a second, not the default 10
              '-master.electionTimeout=1s',
              '-s3.port.iceberg=0',
              '-s3.port.lance=0',
              '-volume.max=0',
              '-filer',
              '-s3',
              `-s3.port=${s3}`,
              `-s3.config=${dir}/s3.json`,
            ],
          ];
        },
        async health() {
          const r = await s3Request(cfg, 'GET', '/');
          if (r.status !== 200) return `signed ListBuckets: HTTP ${r.status} ${r.body.slice(0, 200)}`;
          const anon = await fetch(new URL('/', cfg.endpoint), { signal: AbortSignal.timeout(3000) });
          await anon.text();
          if (anon.status !== 403) return `an unsigned request was answered ${anon.status}, expected 403 (signatures not verified?)`;
          return true;
        },
        async afterHealthy(log) {
          // the filer may need a moment after S3 answers; retry bucket creation (bounded)
          let last = '';
          const deadline = Date.now() + 60000;
          while (Date.now() < deadline) {
            try {
              const r = await s3Request(cfg, 'PUT', `/${cfg.bucket}`, { timeoutMs: 15000 });
              if (r.status === 200 || r.body.includes('BucketAlreadyOwnedByYou') || r.body.includes('BucketAlreadyExists')) {
                const head = await s3Request(cfg, 'HEAD', `/${cfg.bucket}`, { timeoutMs: 15000 });
                if (head.status === 200) {
                  log(`seaweedfs: bucket ${cfg.bucket} ready`);
                  return;
                }
                last = `HEAD /${cfg.bucket}: ${head.status}`;
              } else last = `PUT /${cfg.bucket}: ${r.status} ${r.body.slice(0, 200)}`;
            } catch (err) {
              last = `PUT /${cfg.bucket}: ${err.message}`;
            }
            await new Promise((res) => setTimeout(res, 500));
          }
          throw new Error(`could not create bucket ${cfg.bucket} within 60 s (${last})`);
        },
        url: `${cfg.endpoint} (bucket ${cfg.bucket})`,
      };
    }
    case 'opensearch': {
      const http = intSetting('CAPTURE_LEDGER_OPENSEARCH_PORT');
      const transport = http + 100;
      const cmd = opensearchCommand();
      const home = STACK_DIR + 'opensearch';
      return {
        name,
        ports: [
          { setting: 'CAPTURE_LEDGER_OPENSEARCH_PORT', port: http },
          { setting: 'CAPTURE_LEDGER_OPENSEARCH_PORT + 100 (transport)', port: transport },
        ],
        timeoutMs: 180000,
        tool: cmd,
        missing: 'the OpenSearch launcher (npm run tools -- --profile search builds it into .tools/opensearch)',
        match: 'OpenSearchLauncher',
        prepare() {
          for (const d of ['data', 'logs', 'config']) mkdirSync(`${home}/${d}`, { recursive: true });
        },
        command() {
          return [
            cmd.path,
            [
              '-Xms512m',
              '-Xmx512m',
              '-XX:+UseG1GC',
              '-Djava.awt.headless=true',
              '-Dfile.encoding=UTF-8',
              '-Dio.netty.noUnsafe=true',
              '-Dio.netty.noKeySetOptimization=true',
              '-Dio.netty.recycler.maxCapacityPerThread=0',
              '-Dlog4j.shutdownHookEnabled=false',
              '-Dlog4j2.disable.jmx=true',
              ...cmd.args,
              cmd.main,
              `path.home=${home}`,
              `path.data=${home}/data`,
              `path.logs=${home}/logs`,
              'cluster.name=capture-ledger',
              'node.name=capture-ledger-1',
              'discovery.type=single-node',
              'network.host=127.0.0.1',
              `http.port=${http}`,
              `transport.port=${transport}`,
              'cluster.routing.allocation.disk.threshold_enabled=false',
              'action.auto_create_index=true',
            ],
          ];
        },
        health: () =>
          httpOk(`http://127.0.0.1:${http}/_cluster/health`, (b) => {
            const s = JSON.parse(b).status;
            return s === 'green' || s === 'yellow';
          }),
        async afterHealthy() {
          // one node: indices get no replicas (so they are green) unless their own settings say so
          const res = await fetch(`http://127.0.0.1:${http}/_template/capture-ledger-single-node`, {
            method: 'PUT',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({ index_patterns: ['*'], order: -1, settings: { number_of_replicas: 0 } }),
            signal: AbortSignal.timeout(10000),
          });
          if (res.status !== 200) throw new Error(`opensearch: could not put the single-node index template (HTTP ${res.status} ${await res.text()})`);
        },
        url: `http://127.0.0.1:${http}`,
      };
    }
    default:
      throw new Error(`unknown service ${name}`);
  }
}

let pgIds = null;
function pgIdsOf() {
  if (!pgIds) {
    const out = execFileSync('id', ['postgres'], { encoding: 'utf8' });
    pgIds = { uid: Number(/uid=(\d+)/.exec(out)[1]), gid: Number(/gid=(\d+)/.exec(out)[1]) };
  }
  return pgIds;
}
function postgresUid() {
  return pgIdsOf().uid;
}
function postgresGid() {
  return pgIdsOf().gid;
}

export { ROOT };
