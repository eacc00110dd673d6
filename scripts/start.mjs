// npm start [-- --profile search]
// Sets up whatever is missing (Node 24, npm ci, .env, tools, stack:up, db:migrate, fga:deploy,
// Debian's chromium for the flow), then runs the app's processes (api, worker, flow, issuer,
// replay) on that node with prefixed output, and prints every URL. Ctrl-C stops the processes it
// started (the stack stays up; `npm run stack:down` stops it).
import { spawn } from 'node:child_process';
import { ROOT, loadEnv } from './lib/env.mjs';
import { reexecOnProjectNode, scriptCommand } from './lib/node.mjs';
import { chmodSync, existsSync } from 'node:fs';
import { CAPTURE_USER } from './lib/capture-user.mjs';
import { ensureChromium, say, setup, parseProfileArgs } from './lib/setup.mjs';

await reexecOnProjectNode(say);

const APPS = ['api', 'worker', 'flow', 'capture-worker', 'issuer', 'replay'];
const COLORS = [36, 33, 35, 31, 32, 34];

const { profiles } = parseProfileArgs(process.argv.slice(2));

try {
  await setup({ profiles });
  // the reference capture flow drives Debian's chromium
  await ensureChromium();
} catch (err) {
  console.error(`npm start: setup failed: ${err.message}`);
  process.exit(1);
}

const env = loadEnv({ fresh: true });
// The reference capture flow needs no grant: each level report is bound to its dispatch by the
// capability the dispatch carried, and any valid token goes with it.

const childEnv = { ...process.env };
if (profiles.has('search') && !env.CAPTURE_LEDGER_OPENSEARCH_URL) {
  childEnv.CAPTURE_LEDGER_OPENSEARCH_URL = `http://127.0.0.1:${env.CAPTURE_LEDGER_OPENSEARCH_PORT}`;
}

// The ledger's settings are for root's processes only: the capture user may not read them.
for (const f of ['.env', '.env.local']) if (existsSync(ROOT + f) && process.getuid?.() === 0) chmodSync(ROOT + f, 0o600);

// A capture worker gets its own variables and nothing else: no database, OpenFGA, webhook or
// signing secrets reach the process that runs hostile pages in Chromium.
const captureWorkerEnv = {
  PATH: process.env.PATH,
  ...Object.fromEntries(Object.entries({ ...env, ...process.env }).filter(([k]) => k.startsWith('CAPTURE_WORKER_'))),
};
if (!captureWorkerEnv.CAPTURE_WORKER_DENIED_PORTS) captureWorkerEnv.CAPTURE_WORKER_DENIED_PORTS = stackPorts(env).join(',');

/** The stack's own ports (as the ledger's config computes them), which no capture may reach. */
function stackPorts(e) {
  const n = (k, d) => (/^\d+$/.test(e[k] ?? '') ? Number(e[k]) : d);
  const s3 = n('CAPTURE_LEDGER_S3_PORT', 8333);
  const os = n('CAPTURE_LEDGER_OPENSEARCH_PORT', 9200);
  const temporal = n('CAPTURE_LEDGER_TEMPORAL_PORT', 7233);
  const named = ['PG', 'TEMPORAL_UI', 'FGA_HTTP', 'FGA_GRPC', 'API', 'ISSUER', 'FLOW', 'REPLAY'].map((k) => n(`CAPTURE_LEDGER_${k}_PORT`, 0));
  return [...new Set([...named, temporal, temporal + 10, ...[0, 1, 2, 3].flatMap((i) => [s3 + i, s3 + i + 10000]), os, os + 100])]
    .filter((p) => p > 0)
    .sort((a, b) => a - b);
}

const children = new Map();
let stopping = false;
const width = Math.max(...APPS.map((a) => a.length));

function prefixed(name, color, stream, out) {
  let buf = '';
  stream.on('data', (d) => {
    buf += d.toString();
    const lines = buf.split('\n');
    buf = lines.pop();
    for (const l of lines) out.write(`\x1b[${color}m${name.padEnd(width)} |\x1b[0m ${l}\n`);
  });
  stream.on('end', () => {
    if (buf) out.write(`\x1b[${color}m${name.padEnd(width)} |\x1b[0m ${buf}\n`);
  });
}

say(`apps on node ${process.version} (${process.execPath.replace(ROOT, '')})`);
APPS.forEach((name, i) => {
  // the package.json script's node command, run without npm in between; its own process group,
  // so Ctrl-C stops it and whatever it started together
  const [node, args] = scriptCommand(name);
  // a root capture worker runs as the unprivileged capture user (Chromium then keeps its sandbox)
  const asCaptureUser = name === 'capture-worker' && process.getuid?.() === 0;
  const [cmd, cmdArgs] = asCaptureUser ? ['runuser', ['-u', CAPTURE_USER, '--', node, ...args]] : [node, args];
  const child = spawn(cmd, cmdArgs, {
    cwd: ROOT,
    env: name === 'capture-worker' ? captureWorkerEnv : childEnv,
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.set(name, child);
  prefixed(name, COLORS[i % COLORS.length], child.stdout, process.stdout);
  prefixed(name, COLORS[i % COLORS.length], child.stderr, process.stderr);
  child.on('exit', (code, signal) => {
    children.delete(name);
    if (!stopping) say(`${name} exited (${signal ?? `code ${code}`}); the others keep running`);
    if (children.size === 0 && stopping) process.exit(0);
  });
});

const e = (k) => env[k];
const s3 = `${e('CAPTURE_LEDGER_S3_ENDPOINT')} (bucket ${e('CAPTURE_LEDGER_S3_BUCKET')}, key ${e('CAPTURE_LEDGER_S3_ACCESS_KEY_ID')})`;
const urls = [
  ['API', `http://${e('CAPTURE_LEDGER_API_HOST')}:${e('CAPTURE_LEDGER_API_PORT')}/api`],
  ['picker', `http://${e('CAPTURE_LEDGER_API_HOST')}:${e('CAPTURE_LEDGER_API_PORT')}/`],
  ['Temporal Web UI', `http://127.0.0.1:${e('CAPTURE_LEDGER_TEMPORAL_UI_PORT')}`],
  ['Temporal gRPC', e('CAPTURE_LEDGER_TEMPORAL_ADDRESS')],
  ['replay', e('CAPTURE_LEDGER_REPLAY_URL')],
  ['S3', s3],
  ['OpenFGA', e('CAPTURE_LEDGER_FGA_API_URL')],
  ['issuer', `http://127.0.0.1:${e('CAPTURE_LEDGER_ISSUER_PORT')}`],
  ['capture flow webhook', e('CAPTURE_LEDGER_CRAWL_WEBHOOK_URL')],
  ['Postgres', e('CAPTURE_LEDGER_DATABASE_URL')?.replace(/:[^:@/]*@/, ':***@')],
];
if (profiles.has('search')) urls.push(['OpenSearch', childEnv.CAPTURE_LEDGER_OPENSEARCH_URL]);
console.log(
  '\ncapture-ledger is starting:\n' +
    urls.map(([k, v]) => `  ${k.padEnd(21)} ${v}`).join('\n') +
    '\n  (Ctrl-C stops these processes; the stack stays up — npm run stack:down)\n',
);

function stopAll(sig) {
  if (stopping) return;
  stopping = true;
  say(`${sig}: stopping ${[...children.keys()].join(', ') || 'nothing'}`);
  if (children.size === 0) process.exit(0);
  for (const child of children.values()) {
    try {
      process.kill(-child.pid, 'SIGTERM');
    } catch {
      /* already gone */
    }
  }
  setTimeout(() => {
    for (const child of children.values()) {
      try {
        process.kill(-child.pid, 'SIGKILL');
      } catch {
        /* already gone */
      }
    }
    process.exit(0);
  }, 10000).unref();
}
process.on('SIGINT', () => stopAll('SIGINT'));
process.on('SIGTERM', () => stopAll('SIGTERM'));
if (children.size === 0) say('no app process exists yet; the stack is up');
