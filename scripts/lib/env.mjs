// Project settings for the scripts: .env.example (defaults), then .env, then .env.local; a later
// file wins over an earlier one, and a variable already set in the real environment wins over all
// of them (like node's --env-file). process.loadEnvFile never overrides, so merge by hand.
// process.env itself is left alone: the commands the scripts run (npm run db:migrate, the app
// processes) read the files themselves, and .env.local may only exist after fga:deploy.
import { randomBytes } from 'node:crypto';
import { appendFileSync, copyFileSync, existsSync, readFileSync } from 'node:fs';
import { parseEnv } from 'node:util';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = fileURLToPath(new URL('../../', import.meta.url));
export const STACK_DIR = ROOT + '.stack/';
export const TOOLS_DIR = ROOT + '.tools/';

let loaded = null;

/** The three files merged under `root`, the real environment winning. */
function mergedEnv(root) {
  const merged = {};
  for (const f of ['.env.example', '.env', '.env.local']) {
    const p = join(root, f);
    if (existsSync(p)) Object.assign(merged, parseEnv(readFileSync(p, 'utf8')));
  }
  return { ...merged, ...pick(process.env, Object.keys(merged)) };
}

/** The merged settings (read once; `fresh` re-reads the files, e.g. after fga:deploy). */
export function loadEnv({ fresh = false } = {}) {
  if (loaded && !fresh) return loaded;
  loaded = mergedEnv(ROOT);
  return loaded;
}

function pick(obj, keys) {
  const out = {};
  for (const k of keys) if (obj[k] !== undefined) out[k] = obj[k];
  return out;
}

/** `npm start` / `npm test`: a fresh clone has no .env yet; copy the template verbatim. */
export function ensureDotEnv(log = console.log) {
  if (!existsSync(ROOT + '.env')) {
    copyFileSync(ROOT + '.env.example', ROOT + '.env');
    log('created .env from .env.example');
  }
}

/**
 * The local stack's secrets. None is published: .env.example leaves each empty, and `npm start`,
 * `npm test` and `stack:up` generate every one no file or the environment sets into .env.local
 * (never committed, readable by its owner only), so two checkouts never share a key.
 */
export const LOCAL_SECRETS = [
  ['CAPTURE_LEDGER_FLOW_CLIENT_SECRET', "the capture flow's secret at the issuer"],
  ['CAPTURE_LEDGER_S3_SECRET_ACCESS_KEY', "the ledger's S3 key"],
  ['CAPTURE_WORKER_S3_SECRET_ACCESS_KEY', "the capture workers' put-only S3 key"],
  ['CAPTURE_LEDGER_CRAWL_WEBHOOK_TOKEN', "the ledger's token at the capture flow's webhook"],
];

/** Values .env.example once shipped: a .env copied from it then still holds them, and they are public. */
const PUBLISHED = new Set(['capture-ledger-dev-secret', 'capture-worker-dev-secret', 'dev-webhook-token']);

/** The Postgres URLs: .env.example names their role without a password, which is generated too. */
export const DATABASE_URLS = ['CAPTURE_LEDGER_DATABASE_URL', 'CAPTURE_LEDGER_FGA_DATABASE_URL'];

/** Passwords .env.example once shipped inside the database URLs (and none at all). */
const PUBLISHED_PASSWORDS = new Set(['', 'capture_ledger']);

const generated = () => randomBytes(32).toString('base64url');

/**
 * Generates into .env.local each local secret that is unset, empty or a published value, and a
 * password for each database URL's role that has none or a published one (one password a role,
 * the same in every URL naming it). A value .env.local or the environment sets is a choice, kept
 * even when it is a published one (compose.yaml's stack uses them). Returns the names written.
 */
export function ensureLocalSecrets(log = console.log, root = ROOT) {
  const env = mergedEnv(root);
  const chosen = chosenNames(root);
  const lines = new Map();
  for (const [name, what] of LOCAL_SECRETS) {
    if (chosen.has(name) || (env[name]?.trim() && !PUBLISHED.has(env[name]))) continue;
    lines.set(name, generated());
    log(`generated ${name} into .env.local (${what})`);
  }
  const roles = new Map();
  for (const [name, url] of withPasswords(env, chosen)) {
    lines.set(name, url);
    const role = decodeURIComponent(new URL(url).username);
    roles.set(role, [...(roles.get(role) ?? []), name]);
  }
  for (const [role, names] of roles) log(`generated a password for Postgres role ${role} into .env.local (${names.join(', ')})`);
  if (lines.size === 0) return [];
  const file = join(root, '.env.local');
  const text = existsSync(file) ? readFileSync(file, 'utf8') : '';
  const added = [...lines].map(([name, value]) => `${name}=${value}\n`).join('');
  appendFileSync(file, text === '' || text.endsWith('\n') ? added : `\n${added}`, { mode: 0o600 });
  if (root === ROOT) loaded = null;
  return [...lines.keys()];
}

/** The variables .env.local or the environment set to something. */
function chosenNames(root) {
  const file = join(root, '.env.local');
  const local = existsSync(file) ? parseEnv(readFileSync(file, 'utf8')) : {};
  return new Set([...Object.entries(local), ...Object.entries(process.env)].filter(([, v]) => v?.trim()).map(([k]) => k));
}

/** The database URLs not chosen whose password is missing or published, each with its role's password. */
function withPasswords(env, chosen) {
  const urls = DATABASE_URLS.map((name) => [name, URL.parse(env[name] ?? '')]).filter(([, u]) => u !== null && u.username !== '');
  const published = ([name, u]) => !chosen.has(name) && PUBLISHED_PASSWORDS.has(decodeURIComponent(u.password));
  const kept = new Map(urls.filter((e) => !published(e)).map(([, u]) => [u.username, u.password]));
  const out = [];
  for (const [name, u] of urls.filter(published)) {
    if (!kept.has(u.username)) kept.set(u.username, generated());
    u.password = kept.get(u.username);
    out.push([name, u.href]);
  }
  return out;
}

export function intSetting(name) {
  const raw = loadEnv()[name];
  const n = Number(raw);
  if (!raw || !Number.isInteger(n) || n <= 0 || n > 65535) {
    throw new Error(`${name} must be a port number (got ${JSON.stringify(raw)}); see .env.example`);
  }
  return n;
}

/** A `postgres://` setting, parsed; a missing or malformed one names itself and the file to mend. */
export function postgresUrlSetting(name) {
  const raw = loadEnv()[name];
  const url = raw ? URL.parse(raw) : null;
  if (url === null || !['postgres:', 'postgresql:'].includes(url.protocol) || url.pathname.length < 2) {
    throw new Error(`${name} must be a postgres://user:password@host:port/database URL (got ${JSON.stringify(raw)}); see .env.example`);
  }
  return url;
}
