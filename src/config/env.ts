// Every environment variable the code reads is read here, once, and checked before anything
// starts. A bad value stops startup with one message naming the variable and the value: read
// per-request instead, a typo surfaces at 3am as a failure that never mentions the setting.
import { isArchiveDomain } from '../domain/replay-origin.ts';
import { AllowlistError, isStackAddress, parseAllowlist, type AllowEntry } from '../domain/address-policy.ts';
import { CAPTURE_FORMATS, type CaptureFormat } from '../domain/contract.ts';
import { MIN_FLOW_SECRET_LENGTH } from '../domain/flow-client.ts';

export type { CaptureFormat };

/** Variables without which no process can do its job. */
export const REQUIRED_ENV = [
  'CAPTURE_LEDGER_DATABASE_URL',
  'CAPTURE_LEDGER_FGA_API_URL',
  'CAPTURE_LEDGER_FGA_STORE_ID',
  'CAPTURE_LEDGER_FGA_MODEL_ID',
  'CAPTURE_LEDGER_S3_ENDPOINT',
  'CAPTURE_LEDGER_S3_ACCESS_KEY_ID',
  'CAPTURE_LEDGER_S3_SECRET_ACCESS_KEY',
  'CAPTURE_LEDGER_S3_BUCKET',
] as const;

/** A password inside a URL (scheme://user:password@host) becomes ***: messages get logged. */
export function redactUrlPasswords(text: string): string {
  return text.replace(/([a-z][a-z0-9+.-]*:\/\/[^/\s:@"]*:)[^@\s"]*@/gi, '$1***@');
}

export class ConfigError extends Error {
  readonly variable: string;
  /** the value as given, with any password inside a URL replaced by *** */
  readonly value: string | undefined;
  constructor(variable: string, value: string | undefined, reason: string) {
    const shown = value === undefined ? undefined : redactUrlPasswords(value);
    super(`${variable}=${JSON.stringify(shown ?? '')}: ${redactUrlPasswords(reason)}`);
    this.name = 'ConfigError';
    this.variable = variable;
    this.value = shown;
  }
}

/** 127.0.0.0/8, ::1 and localhost: addresses only this machine can reach. */
export function isLoopbackHost(host: string): boolean {
  const h = host.replace(/^\[|\]$/g, '').toLowerCase();
  return h === 'localhost' || h === '::1' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(h);
}

export interface Config {
  databaseUrl: string;
  temporal: { address: string; namespace: string; taskQueue: string };
  fga: { apiUrl: string; storeId: string; modelId: string };
  s3: { endpoint: string; region: string; accessKeyId: string; secretAccessKey: string; bucket: string };
  opensearch: { url: string; index: string } | undefined;
  api: { host: string; port: number; publicUrl: string; replayUrl: string };
  identity: { mode: 'oidc'; issuer: string; audience: string; devIdentityAlsoSet: boolean; flowClientSecret?: string } | { mode: 'dev' } | { mode: 'none' };
  issuerPort: number;
  crawl: {
    webhook: { url: string; token: string } | undefined;
    formats: CaptureFormat[];
    signing: boolean;
    levelTimeoutSeconds: number;
    /** once a level has had a heartbeat, silence longer than this dispatches it again (default 60) */
    livenessWindowSeconds?: number;
  };
  flowPort: number;
  replayPort: number;
  /** each archive replays on `<label>.<this domain>` (src/domain/replay-origin.ts); unset: one shared origin */
  replayArchiveDomain: string | undefined;
  /** the address policy's settings (src/domain/address-policy.ts) */
  capture: { allow: AllowEntry[]; deniedPorts: number[] };
}

type Env = Record<string, string | undefined>;

function str(env: Env, name: string, fallback?: string): string {
  const v = env[name];
  if (v === undefined || v.trim() === '') {
    if (fallback !== undefined) return fallback;
    throw new ConfigError(name, v, 'is required');
  }
  return v.trim();
}

function optional(env: Env, name: string): string | undefined {
  const v = env[name];
  return v === undefined || v.trim() === '' ? undefined : v.trim();
}

const HTTP = ['http:', 'https:'];
const POSTGRES = ['postgres:', 'postgresql:'];

function url(env: Env, name: string, fallback?: string, schemes: readonly string[] = HTTP): string {
  const v = str(env, name, fallback);
  let parsed: URL;
  try {
    parsed = new URL(v);
  } catch {
    throw new ConfigError(name, v, 'is not a URL');
  }
  if (!schemes.includes(parsed.protocol)) {
    throw new ConfigError(name, v, `has the scheme ${parsed.protocol.replace(/:$/, '')}; expected ${schemes.map((s) => s.replace(/:$/, '')).join(' or ')}`);
  }
  if (parsed.hostname === '') throw new ConfigError(name, v, 'has no host');
  return v;
}

/** host:port, as Temporal's client expects it. */
function hostPort(env: Env, name: string, fallback: string): string {
  const v = str(env, name, fallback);
  const m = /^([^\s:/]+|\[[0-9a-fA-F:]+\]):(\d+)$/.exec(v);
  if (!m || Number(m[2]) < 1 || Number(m[2]) > 65535) throw new ConfigError(name, v, 'must be host:port (port 1-65535)');
  return v;
}

function int(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = optional(env, name);
  if (raw === undefined) return fallback;
  if (!/^\d+$/.test(raw)) throw new ConfigError(name, raw, 'is not a whole number');
  const n = Number(raw);
  if (n < min || n > max) throw new ConfigError(name, raw, `must be between ${min} and ${max}`);
  return n;
}

function flag(env: Env, name: string): boolean {
  const raw = optional(env, name);
  if (raw === undefined || raw === '0' || raw === 'false') return false;
  if (raw === '1' || raw === 'true') return true;
  throw new ConfigError(name, raw, 'must be 1 or 0');
}

export function parseFormats(env: Env): CaptureFormat[] {
  const name = 'CAPTURE_LEDGER_CAPTURE_FORMATS';
  const raw = str(env, name, 'wacz');
  const parts = raw.split(',').map((s) => s.trim());
  const unknown = parts.filter((p) => !(CAPTURE_FORMATS as readonly string[]).includes(p));
  if (unknown.length > 0 || parts.length === 0) {
    throw new ConfigError(name, raw, `unknown capture format ${unknown.map((u) => JSON.stringify(u)).join(', ')}; allowed: ${CAPTURE_FORMATS.join(',')}`);
  }
  return [...new Set(parts)] as CaptureFormat[];
}

/**
 * Just the database URL, for `npm run db:migrate`, which runs before fga:deploy has written the
 * OpenFGA ids that loadConfig requires.
 */
export function loadDatabaseUrl(env: Env = process.env): string {
  return url(env, 'CAPTURE_LEDGER_DATABASE_URL', undefined, POSTGRES);
}

/** Just the OpenFGA API URL, for `npm run fga:deploy`, which is what creates the ids. */
export function loadFgaApiUrl(env: Env = process.env): string {
  return url(env, 'CAPTURE_LEDGER_FGA_API_URL');
}

/** Reads and checks the whole configuration; throws ConfigError on the first bad value. */
export function loadConfig(env: Env = process.env): Config {
  for (const name of REQUIRED_ENV) str(env, name);
  const crawl = crawlSection(env);
  const identity = identitySection(env);
  return {
    databaseUrl: url(env, 'CAPTURE_LEDGER_DATABASE_URL', undefined, POSTGRES),
    temporal: {
      address: hostPort(env, 'CAPTURE_LEDGER_TEMPORAL_ADDRESS', '127.0.0.1:7233'),
      namespace: str(env, 'CAPTURE_LEDGER_TEMPORAL_NAMESPACE', 'default'),
      taskQueue: str(env, 'CAPTURE_LEDGER_TEMPORAL_TASK_QUEUE', 'capture-ledger'),
    },
    fga: {
      apiUrl: url(env, 'CAPTURE_LEDGER_FGA_API_URL'),
      storeId: str(env, 'CAPTURE_LEDGER_FGA_STORE_ID'),
      modelId: str(env, 'CAPTURE_LEDGER_FGA_MODEL_ID'),
    },
    s3: s3Section(env),
    opensearch: opensearchSection(env),
    api: apiSection(env),
    identity,
    issuerPort: int(env, 'CAPTURE_LEDGER_ISSUER_PORT', 7071, 1, 65535),
    crawl,
    flowPort: int(env, 'CAPTURE_LEDGER_FLOW_PORT', 7072, 1, 65535),
    replayPort: int(env, 'CAPTURE_LEDGER_REPLAY_PORT', 8899, 1, 65535),
    replayArchiveDomain: archiveDomain(env),
    capture: { allow: captureAllow(env), deniedPorts: stackPorts(env) },
  };
}

function crawlSection(env: Env): Config['crawl'] {
  const formats = parseFormats(env);
  const signing = flag(env, 'CAPTURE_LEDGER_CAPTURE_SIGNING');
  if (signing && !formats.includes('wacz')) {
    throw new ConfigError(
      'CAPTURE_LEDGER_CAPTURE_SIGNING',
      env.CAPTURE_LEDGER_CAPTURE_SIGNING,
      `signing needs wacz in CAPTURE_LEDGER_CAPTURE_FORMATS (now ${formats.join(',')})`,
    );
  }
  return {
    webhook: webhook(env),
    formats,
    signing,
    levelTimeoutSeconds: int(env, 'CAPTURE_LEDGER_LEVEL_TIMEOUT_SECONDS', 1800, 1, 7 * 24 * 3600),
    livenessWindowSeconds: int(env, 'CAPTURE_LEDGER_LEVEL_LIVENESS_SECONDS', 60, 1, 3600),
  };
}

function webhook(env: Env): Config['crawl']['webhook'] {
  const hookUrl = optional(env, 'CAPTURE_LEDGER_CRAWL_WEBHOOK_URL');
  const hookToken = optional(env, 'CAPTURE_LEDGER_CRAWL_WEBHOOK_TOKEN');
  // Half a webhook fails only after someone asks for a crawl, by which time a row is open.
  if (hookUrl === undefined && hookToken !== undefined) {
    throw new ConfigError(
      'CAPTURE_LEDGER_CRAWL_WEBHOOK_URL',
      env.CAPTURE_LEDGER_CRAWL_WEBHOOK_URL,
      'is not set but CAPTURE_LEDGER_CRAWL_WEBHOOK_TOKEN is: set both or neither',
    );
  }
  if (hookUrl !== undefined && hookToken === undefined) {
    throw new ConfigError(
      'CAPTURE_LEDGER_CRAWL_WEBHOOK_TOKEN',
      env.CAPTURE_LEDGER_CRAWL_WEBHOOK_TOKEN,
      `is not set but CAPTURE_LEDGER_CRAWL_WEBHOOK_URL is (${hookUrl}): set both or neither`,
    );
  }
  if (hookUrl === undefined || hookToken === undefined) return undefined;
  url(env, 'CAPTURE_LEDGER_CRAWL_WEBHOOK_URL');
  return { url: hookUrl, token: hookToken };
}

function identitySection(env: Env): Config['identity'] {
  const issuer = optional(env, 'CAPTURE_LEDGER_OIDC_ISSUER');
  const dev = flag(env, 'CAPTURE_LEDGER_DEV_IDENTITY');
  if (issuer !== undefined) {
    url(env, 'CAPTURE_LEDGER_OIDC_ISSUER');
    const flowClientSecret = flowSecret(env);
    return {
      mode: 'oidc',
      issuer,
      audience: str(env, 'CAPTURE_LEDGER_OIDC_AUDIENCE', 'capture-ledger'),
      devIdentityAlsoSet: dev,
      ...(flowClientSecret === undefined ? {} : { flowClientSecret }),
    };
  }
  if (!dev) return { mode: 'none' };
  // the dev resolver believes any caller's headers: only this machine may reach it
  const host = str(env, 'CAPTURE_LEDGER_API_HOST', '127.0.0.1');
  if (!isLoopbackHost(host)) {
    throw new ConfigError(
      'CAPTURE_LEDGER_DEV_IDENTITY',
      env.CAPTURE_LEDGER_DEV_IDENTITY,
      `trusts any caller's headers, so the API must bind to loopback (127.0.0.1, ::1 or localhost), not CAPTURE_LEDGER_API_HOST=${host}`,
    );
  }
  return { mode: 'dev' };
}

function s3Section(env: Env): Config['s3'] {
  return {
    endpoint: url(env, 'CAPTURE_LEDGER_S3_ENDPOINT'),
    region: str(env, 'CAPTURE_LEDGER_S3_REGION', 'us-east-1'),
    accessKeyId: str(env, 'CAPTURE_LEDGER_S3_ACCESS_KEY_ID'),
    secretAccessKey: str(env, 'CAPTURE_LEDGER_S3_SECRET_ACCESS_KEY'),
    bucket: str(env, 'CAPTURE_LEDGER_S3_BUCKET'),
  };
}

function opensearchSection(env: Env): Config['opensearch'] {
  if (optional(env, 'CAPTURE_LEDGER_OPENSEARCH_URL') === undefined) return undefined;
  return { url: url(env, 'CAPTURE_LEDGER_OPENSEARCH_URL'), index: str(env, 'CAPTURE_LEDGER_OPENSEARCH_INDEX', 'capture-ledger-pages') };
}

function apiSection(env: Env): Config['api'] {
  const port = int(env, 'CAPTURE_LEDGER_API_PORT', 7070, 1, 65535);
  return {
    host: str(env, 'CAPTURE_LEDGER_API_HOST', '127.0.0.1'),
    port,
    publicUrl: url(env, 'CAPTURE_LEDGER_PUBLIC_URL', `http://127.0.0.1:${port}`),
    replayUrl: url(env, 'CAPTURE_LEDGER_REPLAY_URL', 'http://127.0.0.1:8899'),
  };
}

function archiveDomain(env: Env): string | undefined {
  const name = 'CAPTURE_LEDGER_REPLAY_ARCHIVE_DOMAIN';
  const v = optional(env, name);
  if (v !== undefined && !isArchiveDomain(v))
    throw new ConfigError(name, v, 'must be a lowercase DNS name of two labels or more, such as replay.localhost (each archive replays on <digest>.<it>)');
  return v;
}

/** The capture flow's client secret at the issuer (the flow and the dev issuer hold the same one). */
function flowSecret(env: Env): string | undefined {
  const name = 'CAPTURE_LEDGER_FLOW_CLIENT_SECRET';
  const v = optional(env, name);
  if (v !== undefined && v.length < MIN_FLOW_SECRET_LENGTH)
    throw new ConfigError(name, '***', `must be at least ${MIN_FLOW_SECRET_LENGTH} characters (npm start generates one into .env.local)`);
  return v;
}

/**
 * The capture allowlist. A host:port entry naming one of the stack's ports or its own address
 * (which the policy refuses whatever the list says) stops startup: it can only be a mistake.
 */
function captureAllow(env: Env): AllowEntry[] {
  const name = 'CAPTURE_LEDGER_CAPTURE_ALLOW';
  const raw = optional(env, name) ?? '';
  let entries: AllowEntry[];
  try {
    entries = parseAllowlist(raw);
  } catch (err) {
    if (err instanceof AllowlistError) throw new ConfigError(name, raw, err.message);
    throw err;
  }
  const denied = new Set(stackPorts(env));
  for (const e of entries) {
    if (e.kind !== 'host-port') continue;
    if (denied.has(e.port))
      throw new ConfigError(name, raw, `allowlist entry ${JSON.stringify(e.text)}: port ${e.port} is one of the stack's own, which no entry opens`);
    if (isStackAddress(e.host)) throw new ConfigError(name, raw, `allowlist entry ${JSON.stringify(e.text)}: the stack's own address, which no entry opens`);
  }
  return entries;
}

function portOf(v: string | undefined): number[] {
  if (v === undefined) return [];
  try {
    const u = new URL(v.includes('://') ? v : `tcp://${v}`);
    return u.port === '' ? [] : [Number(u.port)];
  } catch {
    return [];
  }
}

/**
 * The stack's own ports, which no allowlist entry opens to a capture: Postgres, Temporal gRPC and
 * UI, OpenFGA HTTP and gRPC, S3 and SeaweedFS's master, volume and filer (the three after it) with
 * their +10000 gRPC ports, OpenSearch and its transport, and the app's own processes. Temporal's
 * dev server also opens an HTTP API, metrics and internal gRPC ports, at random: those are on
 * 127.0.0.1, the stack's own address, which the policy refuses on every port (STACK_ADDRESSES).
 */
export function stackPorts(env: Env): number[] {
  const n = (name: string, fallback: number): number => {
    const v = optional(env, name);
    return v !== undefined && /^\d+$/.test(v) ? Number(v) : fallback;
  };
  const s3 = n('CAPTURE_LEDGER_S3_PORT', portOf(optional(env, 'CAPTURE_LEDGER_S3_ENDPOINT'))[0] ?? 8333);
  const os = n('CAPTURE_LEDGER_OPENSEARCH_PORT', portOf(optional(env, 'CAPTURE_LEDGER_OPENSEARCH_URL'))[0] ?? 9200);
  const ports = [
    n('CAPTURE_LEDGER_PG_PORT', 55432),
    ...portOf(optional(env, 'CAPTURE_LEDGER_DATABASE_URL')),
    ...portOf(optional(env, 'CAPTURE_LEDGER_FGA_DATABASE_URL')),
    n('CAPTURE_LEDGER_TEMPORAL_PORT', 7233),
    ...portOf(optional(env, 'CAPTURE_LEDGER_TEMPORAL_ADDRESS')),
    n('CAPTURE_LEDGER_TEMPORAL_UI_PORT', 8233),
    n('CAPTURE_LEDGER_FGA_HTTP_PORT', 8080),
    ...portOf(optional(env, 'CAPTURE_LEDGER_FGA_API_URL')),
    n('CAPTURE_LEDGER_FGA_GRPC_PORT', 8081),
    ...[0, 1, 2, 3].flatMap((i) => [s3 + i, s3 + i + 10000]),
    ...portOf(optional(env, 'CAPTURE_LEDGER_S3_ENDPOINT')),
    os,
    os + 100,
    n('CAPTURE_LEDGER_API_PORT', 7070),
    n('CAPTURE_LEDGER_ISSUER_PORT', 7071),
    n('CAPTURE_LEDGER_FLOW_PORT', 7072),
    n('CAPTURE_LEDGER_REPLAY_PORT', 8899),
  ];
  return [...new Set(ports)].filter((p) => p >= 1 && p <= 65535).sort((a, b) => a - b);
}

/**
 * loadConfig for entry points: a bad value prints its one message, prefixed with the process it
 * stopped, and exits 1, without a stack.
 */
export function loadConfigOrExit(who = 'configuration', env: Env = process.env): Config {
  try {
    return loadConfig(env);
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    console.error(`${who}: ${err.message}`);
    process.exit(1);
  }
}
