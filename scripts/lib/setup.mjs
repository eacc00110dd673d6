// What `npm start` and `npm test` both do first (after scripts/lib/node.mjs put them on Node 24),
// each step only when it is needed: npm ci, .env, the capture user, the local secrets in
// .env.local, tools, stack:up, db:migrate, fga:deploy.
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { ensureCaptureUser } from './capture-user.mjs';
import { ROOT, ensureDotEnv, ensureLocalSecrets } from './env.mjs';

const t0 = Date.now();
export const say = (msg) => console.log(`[setup ${((Date.now() - t0) / 1000).toFixed(1).padStart(5)}s] ${msg}`);

export class SetupError extends Error {}

/** Runs a command with inherited output; rejects naming the step when it fails. */
export function runStep(step, cmd, args, opts = {}) {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { cwd: ROOT, stdio: 'inherit', ...opts });
    child.on('error', (err) => reject(new SetupError(`${step}: could not run ${cmd} (${err.message})`)));
    child.on('close', (code, signal) => {
      if (code === 0) resolve();
      else reject(new SetupError(`${step}: \`${[cmd, ...args].join(' ')}\` failed (${signal ? `signal ${signal}` : `exit ${code}`})`));
    });
  });
}

function nodeModulesCurrent() {
  // npm ci writes node_modules/.package-lock.json; a lockfile newer than it means deps changed
  const marker = ROOT + 'node_modules/.package-lock.json';
  if (!existsSync(marker)) return false;
  try {
    const want = JSON.parse(readFileSync(ROOT + 'package-lock.json', 'utf8')).packages ?? {};
    const have = JSON.parse(readFileSync(marker, 'utf8')).packages ?? {};
    return Object.entries(want).every(([k, v]) => !k || v.optional || k in have);
  } catch {
    return false;
  }
}

export async function ensureNodeModules() {
  if (nodeModulesCurrent()) return;
  say(`npm ci (node_modules missing or out of date; node ${process.version})`);
  await runStep('npm ci', 'npm', ['ci', '--no-audit', '--no-fund']);
}

/**
 * The shared setup. Tools and stack are imported (not spawned) so that a fresh clone without
 * node_modules still gets them right after `npm ci`.
 */
export async function setup({ profiles = new Set() } = {}) {
  await ensureNodeModules();
  ensureDotEnv(say);
  ensureCaptureUser(say);
  ensureLocalSecrets(say);
  say(`tools${profiles.size ? ` (profile ${[...profiles].join(',')})` : ''}`);
  const { tools } = await import('../tools.mjs');
  await tools({ profiles });
  say('stack:up');
  const { up } = await import('../stack.mjs');
  await up(profiles);
  say('db:migrate');
  await runStep('db:migrate', 'npm', ['run', '--silent', 'db:migrate']);
  say('fga:deploy');
  await runStep('fga:deploy', 'npm', ['run', '--silent', 'fga:deploy']);
}

/**
 * The capture flow and the picker's browser test drive Debian's chromium (playwright-core never
 * downloads one). As root with apt, install it when it is missing; otherwise say what to install.
 */
export async function ensureChromium() {
  if (existsSync('/usr/bin/chromium')) return;
  const root = typeof process.getuid === 'function' && process.getuid() === 0;
  if (!root || !existsSync('/usr/bin/apt-get')) {
    say("warning: /usr/bin/chromium is missing; the capture flow and the browser tests need Debian's chromium (apt-get install chromium)");
    return;
  }
  say("installing Debian's chromium (apt-get, a minute or two; its download lines follow)");
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  await runStep('chromium', 'apt-get', ['update', '-q'], { env });
  await runStep('chromium', 'apt-get', ['install', '-y', '-q', '--no-install-recommends', 'chromium'], { env });
  say('chromium installed');
}

export function parseProfileArgs(argv) {
  const profiles = new Set();
  const rest = [];
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === '--profile') profiles.add(argv[++i]);
    else if (argv[i].startsWith('--profile=')) profiles.add(argv[i].slice(10));
    else rest.push(argv[i]);
  }
  return { profiles, rest };
}
