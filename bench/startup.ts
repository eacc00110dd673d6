// Start time and memory of the app processes: each is spawned the way `npm start` runs it, timed
// until its "listening" line, and its resident memory read then (summed over its process tree: a
// transpiler's CLI runs the app in a child process). The median of several starts per app.
//
//   npm run bench -- startup                              (this tree, plain node)
//   node bench/startup.ts --root /tmp/before --tsx        (another checkout, through its tsx)
import { spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { ROOT, loadEnv } from '../scripts/lib/env.mjs';
import { load1Now } from './support-figures.ts';

interface App {
  name: string;
  entry: string;
  ready: RegExp;
}

// the three that start with no stack behind them (their clients connect lazily)
const APPS: App[] = [
  { name: 'api', entry: 'src/api/main.ts', ready: /capture-ledger api on/ },
  { name: 'issuer', entry: 'src/issuer/main.ts', ready: /dev issuer on/ },
  { name: 'replay', entry: 'src/replay/main.ts', ready: /ReplayWeb\.page on/ },
];

export interface StartupOptions {
  root?: string;
  /** run through the checkout's node_modules/.bin/tsx (how the apps ran before Node 24) */
  tsx?: boolean;
  runs?: number;
}

function rssKb(pid: number): number {
  try {
    return Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0);
  } catch {
    return 0;
  }
}

/** The process and all its descendants (from /proc/<pid>/stat's parent field). */
function tree(root: number): number[] {
  const parent = new Map<number, number>();
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const stat = readFileSync(`/proc/${d}/stat`, 'utf8');
      parent.set(Number(d), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]));
    } catch {
      // gone meanwhile
    }
  }
  const out = [root];
  for (let i = 0; i < out.length; i++) for (const [pid, ppid] of parent) if (ppid === out[i]) out.push(pid);
  return out;
}

async function startOnce(app: App, opts: Required<StartupOptions>, env: NodeJS.ProcessEnv): Promise<{ ms: number; rssMb: number }> {
  const [cmd, args] = opts.tsx ? [`${opts.root}node_modules/.bin/tsx`, [app.entry]] : [process.execPath, [app.entry]];
  const started = performance.now();
  const child = spawn(cmd, args, { cwd: opts.root, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  try {
    const ms = await new Promise<number>((resolve, reject) => {
      let out = '';
      const onData = (d: Buffer): void => {
        out += d.toString();
        if (app.ready.test(out)) resolve(performance.now() - started);
      };
      child.stdout.on('data', onData);
      child.stderr.on('data', onData);
      child.on('exit', (code) => reject(new Error(`${app.name} exited (${code}) before it was ready:\n${out.slice(-2000)}`)));
    });
    const rssMb = tree(child.pid!).reduce((sum, pid) => sum + rssKb(pid), 0) / 1024;
    return { ms, rssMb };
  } finally {
    try {
      process.kill(-child.pid!, 'SIGKILL');
    } catch {
      // already gone
    }
    await new Promise((r) => (child.exitCode !== null || child.signalCode !== null ? r(undefined) : child.once('exit', r)));
  }
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

export async function run(options: StartupOptions = {}): Promise<Record<string, unknown>[]> {
  const root = options.root ?? ROOT;
  const opts: Required<StartupOptions> = { root: root.endsWith('/') ? root : `${root}/`, tsx: options.tsx ?? false, runs: options.runs ?? 5 };
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    ...loadEnv(),
    CAPTURE_LEDGER_FGA_STORE_ID: loadEnv().CAPTURE_LEDGER_FGA_STORE_ID || '01JZZZZZZZZZZZZZZZZZZZZZZZ',
    CAPTURE_LEDGER_FGA_MODEL_ID: loadEnv().CAPTURE_LEDGER_FGA_MODEL_ID || '01JZZZZZZZZZZZZZZZZZZZZZZZ',
    // ports of its own, so a running `npm start` is not in the way
    CAPTURE_LEDGER_API_PORT: '17170',
    CAPTURE_LEDGER_ISSUER_PORT: '17171',
    CAPTURE_LEDGER_REPLAY_PORT: '17899',
    CAPTURE_LEDGER_OIDC_ISSUER: 'http://127.0.0.1:17171',
  };
  const records: Record<string, unknown>[] = [];
  for (const app of APPS) {
    const load1 = load1Now();
    const samples = [];
    for (let i = 0; i < opts.runs; i++) samples.push(await startOnce(app, opts, env));
    records.push({
      bench: 'startup',
      app: app.name,
      runner: opts.tsx ? 'tsx' : 'node',
      node: opts.tsx ? 'node on PATH' : process.version,
      runs: opts.runs,
      readyMs: Math.round(median(samples.map((s) => s.ms))),
      rssMb: Math.round(median(samples.map((s) => s.rssMb))),
      load1,
    });
  }
  return records;
}

if (import.meta.url === pathToFileURL(process.argv[1]!).href) {
  const argv = process.argv.slice(2);
  const root = argv.includes('--root') ? argv[argv.indexOf('--root') + 1] : undefined;
  for (const r of await run({ root, tsx: argv.includes('--tsx') })) console.log(JSON.stringify(r));
}
