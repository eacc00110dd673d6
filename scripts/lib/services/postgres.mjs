// Postgres: one server under .stack/pg holding the ledger's and OpenFGA's databases. Run as root,
// the stack runs its binaries as the postgres user.
import { chmodSync, chownSync, existsSync, mkdirSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { STACK_DIR, intSetting, postgresUrlSetting } from '../env.mjs';
import { postgresBinDir } from '../tools.mjs';

const isRoot = () => process.getuid?.() === 0;

function urlParts(name) {
  const u = postgresUrlSetting(name);
  // decoded as the app's pg client decodes them (pg-connection-string), so both name one role and database
  return { user: decodeURIComponent(u.username), password: decodeURIComponent(u.password), database: decodeURI(u.pathname.slice(1)) };
}

function sqlIdent(s) {
  return '"' + s.replaceAll('"', '""') + '"';
}
function sqlString(s) {
  return "'" + s.replaceAll("'", "''") + "'";
}

/** Postgres's own programs from `bin`, run as the postgres user when the stack runs as root. */
function postgresCommands(bin, sock, port) {
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
  return { asPostgres, psqlCommand, psql };
}

/** The data and socket directories, owned by the postgres user; initdb when the data is new. */
function prepareDirs(log, { bin, data, sock, asPostgres }) {
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
}

/** The server's arguments: 127.0.0.1 and the stack's socket, tuned for a throwaway dev database. */
function serverArgs(data, sock, port) {
  return [
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
  ];
}

/** psql input creating the login roles (or updating their passwords) and the databases they own. */
function rolesAndDatabasesSql(roles, databases) {
  let sql = '';
  for (const [user, password] of roles) {
    sql += `SELECT format('CREATE ROLE %I', ${sqlString(user)}) WHERE NOT EXISTS (SELECT FROM pg_roles WHERE rolname = ${sqlString(user)})\\gexec\n`;
    // SUPERUSER: tests clone databases from a template (CREATE DATABASE ... TEMPLATE)
    sql += `ALTER ROLE ${sqlIdent(user)} WITH LOGIN SUPERUSER PASSWORD ${sqlString(password)};\n`;
  }
  for (const { database, user } of databases) {
    sql += `SELECT format('CREATE DATABASE %I OWNER %I', ${sqlString(database)}, ${sqlString(user)}) WHERE NOT EXISTS (SELECT FROM pg_database WHERE datname = ${sqlString(database)})\\gexec\n`;
  }
  return sql;
}

export function postgresSpec() {
  const port = intSetting('CAPTURE_LEDGER_PG_PORT');
  const bin = postgresBinDir();
  const data = STACK_DIR + 'pg';
  const sock = STACK_DIR + 'pg-run';
  const { asPostgres, psqlCommand, psql } = postgresCommands(bin, sock, port);
  return {
    name: 'postgres',
    ports: [{ setting: 'CAPTURE_LEDGER_PG_PORT', port }],
    timeoutMs: 60000,
    stopSignal: 'SIGINT', // fast shutdown
    tool: bin ? { path: `${bin}/postgres`, source: bin } : null,
    missing: 'postgres (Debian package `postgresql`: apt-get install -y postgresql; .ci/run does it)',
    match: 'postgres',
    // runuser stays as a parent; the real server pid is in postmaster.pid
    realPid: () => Number(String(execFileSync('head', ['-1', data + '/postmaster.pid'])).trim()),
    prepare(log) {
      prepareDirs(log, { bin, data, sock, asPostgres });
    },
    command() {
      return asPostgres(`${bin}/postgres`, serverArgs(data, sock, port));
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
      psql(rolesAndDatabasesSql(roles, [ledger, fga]));
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
