// OpenFGA's own schema in its postgres database. OpenFGA starts fine against an unmigrated
// database and answers 500 on everything (even /healthz) until this has run.
import { spawnSync } from 'node:child_process';
import { appendFileSync, mkdirSync } from 'node:fs';
import { loadEnv } from './env.mjs';
import { resolveBinary } from './tools.mjs';
import { LOG_DIR, logPath, rel } from './proc.mjs';

export function fgaMigrate({ timeoutMs = 120000 } = {}) {
  const env = loadEnv();
  const tool = resolveBinary('openfga');
  if (!tool) throw new Error('fga:migrate: command `openfga` not found on PATH or in .tools/bin; run `npm run tools`');
  const uri = env.CAPTURE_LEDGER_FGA_DATABASE_URL;
  if (!uri) throw new Error('fga:migrate: CAPTURE_LEDGER_FGA_DATABASE_URL is not set (see .env.example)');
  const args = ['migrate', '--datastore-engine', 'postgres', '--datastore-uri', uri];
  const r = spawnSync(tool.path, args, { encoding: 'utf8', timeout: timeoutMs });
  mkdirSync(LOG_DIR, { recursive: true });
  const log = logPath('fga-migrate');
  appendFileSync(
    log,
    `\n--- ${new Date().toISOString()} ${tool.path} migrate --datastore-engine postgres --datastore-uri <CAPTURE_LEDGER_FGA_DATABASE_URL>\n${r.stdout ?? ''}${r.stderr ?? ''}`,
  );
  if (r.error || r.status !== 0) {
    const why = r.error ? r.error.message : `exit code ${r.status}`;
    const tail = `${r.stdout ?? ''}${r.stderr ?? ''}`.trim().split('\n').slice(-8).join('\n    ');
    throw new Error(`fga:migrate: \`openfga migrate\` failed (${why}); log ${rel(log)}\n    ${tail}`);
  }
  return log;
}
