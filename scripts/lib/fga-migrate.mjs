// OpenFGA's own schema in its postgres database. OpenFGA starts fine against an unmigrated
// database and answers 500 on everything (even /healthz) until this has run.
//
// Then its tuple table is analyzed every TUPLE_ANALYZE_ROWS changed rows, not every 10% of the
// table. Every Write first reads the tuples it names (SELECT … FOR UPDATE), and when all of them
// share one user, as a level's archive parent tuples share their crawl's job, Postgres folds the
// 100 rows into "that user, one of these object ids" and, for a user its statistics have not seen
// yet, scans every tuple of that user: each Write costs as much as the crawl's archives so far.
// Measured: one job's tuples written 10,000 at a time ran at 8,855 tuples/s and fell to 950 by
// 80,000; analyzed every 20,000 rows, they came back to 12,500 once the job was in the statistics
// (tuples of one job per batch of 100 stay at 19,800). The server's autovacuum_naptime bounds how
// soon that is (the stack's postgres runs it at 10 s).
import { spawnSync } from 'node:child_process';
import pg from 'pg';
import { appendFileSync, mkdirSync } from 'node:fs';
import { loadEnv } from './env.mjs';
import { resolveBinary } from './tools.mjs';
import { datastoreEnv } from './services/openfga.mjs';
import { LOG_DIR, logPath, rel } from './proc.mjs';

/** Changed rows after which autovacuum analyzes OpenFGA's tuple table (see the top of this file). */
export const TUPLE_ANALYZE_ROWS = 20000;

export async function fgaMigrate({ timeoutMs = 120000 } = {}) {
  const env = loadEnv();
  const tool = resolveBinary('openfga');
  if (!tool) throw new Error('fga:migrate: command `openfga` not found on PATH or in .tools/bin; run `npm run tools`');
  const uri = env.CAPTURE_LEDGER_FGA_DATABASE_URL;
  if (!uri) throw new Error('fga:migrate: CAPTURE_LEDGER_FGA_DATABASE_URL is not set (see .env.example)');
  const r = spawnSync(tool.path, ['migrate', '--datastore-engine', 'postgres'], { encoding: 'utf8', timeout: timeoutMs, env: datastoreEnv(uri) });
  mkdirSync(LOG_DIR, { recursive: true });
  const log = logPath('fga-migrate');
  appendFileSync(
    log,
    `\n--- ${new Date().toISOString()} ${tool.path} migrate --datastore-engine postgres (OPENFGA_DATASTORE_URI=<CAPTURE_LEDGER_FGA_DATABASE_URL>)\n${r.stdout ?? ''}${r.stderr ?? ''}`,
  );
  if (r.error || r.status !== 0) {
    const why = r.error ? r.error.message : `exit code ${r.status}`;
    const tail = `${r.stdout ?? ''}${r.stderr ?? ''}`.trim().split('\n').slice(-8).join('\n    ');
    throw new Error(`fga:migrate: \`openfga migrate\` failed (${why}); log ${rel(log)}\n    ${tail}`);
  }
  await analyzeTuplesOften(uri);
  return log;
}

async function analyzeTuplesOften(uri) {
  const client = new pg.Client({ connectionString: uri });
  await client.connect();
  try {
    await client.query(`ALTER TABLE tuple SET (autovacuum_analyze_scale_factor = 0, autovacuum_analyze_threshold = ${TUPLE_ANALYZE_ROWS})`);
  } catch (err) {
    throw new Error(`fga:migrate: could not set when OpenFGA's tuple table is analyzed: ${err.message}`);
  } finally {
    await client.end();
  }
}
