// What `npm start` and `npm test` both do first, each step only when it is needed:
// npm ci, .env, tools, stack:up, db:migrate, fga:deploy.
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { ROOT, ensureDotEnv } from './env.mjs';

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

export function scriptEntry(name) {
  const scripts = JSON.parse(readFileSync(ROOT + 'package.json', 'utf8')).scripts ?? {};
  const s = scripts[name];
  if (!s) return null;
  const file = s.split(/\s+/).find((w) => /^(src|scripts|bench)\/.*\.(ts|mjs|js)$/.test(w));
  return file ?? null;
}

/**
 * The shared setup. Tools and stack are imported (not spawned) so that a fresh clone without
 * node_modules still gets them right after `npm ci`.
 */
export async function setup({ profiles = new Set() } = {}) {
  if (!nodeModulesCurrent()) {
    say('npm ci (node_modules missing or out of date)');
    try {
      await runStep('npm ci', 'npm', ['ci', '--no-audit', '--no-fund']);
    } catch (err) {
      // npm ci refuses a lock that lacks an optional dependency the registry does not serve
      // (vite's napi-windows-process-start-time); npm install skips it and leaves the lock as is
      say(`${err.message}; falling back to npm install`);
      await runStep('npm install', 'npm', ['install', '--no-audit', '--no-fund']);
    }
  }
  ensureDotEnv(say);
  say(`tools${profiles.size ? ` (profile ${[...profiles].join(',')})` : ''}`);
  const { tools } = await import('../tools.mjs');
  await tools({ profiles });
  say('stack:up');
  const { up } = await import('../stack.mjs');
  await up(profiles);
  say('db:migrate');
  await runStep('db:migrate', 'npm', ['run', '--silent', 'db:migrate']);
  if (existsSync(ROOT + (scriptEntry('fga:deploy') ?? 'src/cli/fga-deploy.ts'))) {
    say('fga:deploy');
    await runStep('fga:deploy', 'npm', ['run', '--silent', 'fga:deploy']);
  } else {
    say('fga:deploy skipped: src/cli/fga-deploy.ts does not exist yet');
  }
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
