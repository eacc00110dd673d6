// `npm start`, `npm test` and `stack:up` generate the local stack's secrets into .env.local (mode
// 0600) once, leave a secret that is set alone, and replace the values .env.example once published
// (scripts/lib/env.mjs ensureLocalSecrets).
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseEnv } from 'node:util';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DATABASE_URLS, ensureLocalSecrets, LOCAL_SECRETS, ROOT } from '../../scripts/lib/env.mjs';
import { MIN_FLOW_SECRET_LENGTH } from '../../src/domain/flow-client.ts';

const NAMES = LOCAL_SECRETS.map(([name]) => name);
const FLOW = 'CAPTURE_LEDGER' + '_FLOW_CLIENT_SECRET';
const WEBHOOK = 'CAPTURE_LEDGER' + '_CRAWL_WEBHOOK_TOKEN';
let root: string;
const saved = new Map<string, string | undefined>();
const quiet = () => undefined;

const example = (): string => NAMES.map((n) => `${n}=\n`).join('');

beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), 'local-secrets-'));
  writeFileSync(join(root, '.env.example'), example());
  for (const n of [...NAMES, ...DATABASE_URLS]) {
    saved.set(n, process.env[n]);
    delete process.env[n];
  }
});
afterEach(() => {
  rmSync(root, { recursive: true, force: true });
  for (const [n, v] of saved) if (v !== undefined) process.env[n] = v;
});

const envLocal = () => readFileSync(join(root, '.env.local'), 'utf8');

describe('ensureLocalSecrets', () => {
  it('the repository publishes no secret: .env.example leaves every one empty, and names the database role without a password', () => {
    const published = parseEnv(readFileSync(join(ROOT, '.env.example'), 'utf8'));
    expect(NAMES).toEqual([FLOW, 'CAPTURE_LEDGER_S3_SECRET_ACCESS_KEY', 'CAPTURE_WORKER_S3_SECRET_ACCESS_KEY', WEBHOOK]);
    for (const n of NAMES) expect(published[n], n).toBe('');
    expect(DATABASE_URLS).toEqual(['CAPTURE_LEDGER_DATABASE_URL', 'CAPTURE_LEDGER_FGA_DATABASE_URL']);
    for (const n of DATABASE_URLS) expect(new URL(published[n]!)).toMatchObject({ protocol: 'postgres:', username: 'capture_ledger', password: '' });
  });

  it('writes a fresh secret for each into a new .env.local, readable by its owner only, and keeps them the next time', () => {
    expect(ensureLocalSecrets(quiet, root)).toEqual(NAMES);
    const first = envLocal();
    const written = parseEnv(first);
    expect(Object.keys(written).sort()).toEqual([...NAMES].sort());
    for (const n of NAMES) expect(written[n]).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(new Set(Object.values(written)).size).toBe(NAMES.length);
    expect(written[FLOW]!.length).toBeGreaterThanOrEqual(MIN_FLOW_SECRET_LENGTH);
    expect(statSync(join(root, '.env.local')).mode & 0o077).toBe(0);
    expect(ensureLocalSecrets(quiet, root)).toEqual([]);
    expect(envLocal()).toBe(first);
  });

  it('appends to an existing .env.local, keeping its lines, each on a line of its own', () => {
    writeFileSync(join(root, '.env.local'), 'OTHER=1');
    ensureLocalSecrets(quiet, root);
    expect(envLocal()).toMatch(new RegExp(`^OTHER=1\\n${NAMES.map((n) => `${n}=[A-Za-z0-9_-]{43}\\n`).join('')}$`));
  });

  it('writes nothing for a secret .env or the environment sets', () => {
    writeFileSync(join(root, '.env'), `${FLOW}=set-in-dot-env-0123456789abcdef0123\n`);
    process.env[WEBHOOK] = 'set-in-the-environment';
    expect(ensureLocalSecrets(quiet, root)).toEqual(NAMES.filter((n) => n !== FLOW && n !== WEBHOOK));
    expect(Object.keys(parseEnv(envLocal()))).not.toContain(FLOW);
  });

  it('keeps a value .env.local sets, even a published one (a choice, as compose.yaml needs)', () => {
    writeFileSync(join(root, '.env.local'), `${WEBHOOK}=dev-webhook-token\n`);
    expect(ensureLocalSecrets(quiet, root)).toEqual(NAMES.filter((n) => n !== WEBHOOK));
    expect(parseEnv(envLocal())[WEBHOOK]).toBe('dev-webhook-token');
  });

  it('replaces the values .env.example once published, which a .env copied from it still holds', () => {
    writeFileSync(join(root, '.env'), `${WEBHOOK}=dev-webhook-token\nCAPTURE_WORKER_S3_SECRET_ACCESS_KEY=capture-worker-dev-secret\n`);
    expect(ensureLocalSecrets(quiet, root)).toEqual(NAMES);
    const written = parseEnv(envLocal());
    expect(written[WEBHOOK]).not.toBe('dev-webhook-token');
    expect(written.CAPTURE_WORKER_S3_SECRET_ACCESS_KEY).not.toBe('capture-worker-dev-secret');
  });

  describe('the database role', () => {
    const LEDGER = 'postgres://capture_ledger@127.0.0.1:55432/capture_ledger';
    const FGA = 'postgres://capture_ledger@127.0.0.1:55432/openfga';
    const urls = (): URL[] => DATABASE_URLS.map((n) => new URL(parseEnv(envLocal())[n]!));

    it('gets one password, written into both URLs with everything else as it was, once', () => {
      writeFileSync(join(root, '.env.example'), `${example()}CAPTURE_LEDGER_DATABASE_URL=${LEDGER}\nCAPTURE_LEDGER_FGA_DATABASE_URL=${FGA}\n`);
      expect(ensureLocalSecrets(quiet, root)).toEqual([...NAMES, ...DATABASE_URLS]);
      const [ledger, fga] = urls();
      expect(ledger!.password).toMatch(/^[A-Za-z0-9_-]{43}$/);
      expect(fga!.password).toBe(ledger!.password);
      const bare = (u: URL): string => Object.assign(new URL(u), { password: '' }).href;
      expect([bare(ledger!), bare(fga!)]).toEqual([LEDGER, FGA]);
      const first = envLocal();
      expect(ensureLocalSecrets(quiet, root)).toEqual([]);
      expect(envLocal()).toBe(first);
    });

    it('replaces the password .env.example once published; a URL that has its own keeps it, and the role shares it', () => {
      const published = (u: string): string => u.replace('capture_ledger@', 'capture_ledger:capture_ledger@');
      writeFileSync(join(root, '.env'), `CAPTURE_LEDGER_DATABASE_URL=${published(LEDGER)}\nCAPTURE_LEDGER_FGA_DATABASE_URL=${published(FGA)}\n`);
      ensureLocalSecrets(quiet, root);
      expect(urls().map((u) => u.password === 'capture_ledger')).toEqual([false, false]);
      rmSync(join(root, '.env.local'));
      writeFileSync(
        join(root, '.env'),
        `CAPTURE_LEDGER_DATABASE_URL=${LEDGER.replace('capture_ledger@', 'capture_ledger:own-one@')}\nCAPTURE_LEDGER_FGA_DATABASE_URL=${FGA}\n`,
      );
      expect(ensureLocalSecrets(quiet, root)).toEqual([...NAMES, 'CAPTURE_LEDGER_FGA_DATABASE_URL']);
      expect(new URL(parseEnv(envLocal()).CAPTURE_LEDGER_FGA_DATABASE_URL!).password).toBe('own-one');
    });

    it('a URL the environment sets is left alone', () => {
      writeFileSync(join(root, '.env.example'), `${example()}CAPTURE_LEDGER_FGA_DATABASE_URL=${FGA}\n`);
      process.env.CAPTURE_LEDGER_FGA_DATABASE_URL = FGA.replace('capture_ledger@', 'capture_ledger:from-env@');
      expect(ensureLocalSecrets(quiet, root)).toEqual(NAMES);
    });
  });

  it('two fresh checkouts get different secrets', () => {
    ensureLocalSecrets(quiet, root);
    const other = mkdtempSync(join(tmpdir(), 'local-secrets-'));
    try {
      writeFileSync(join(other, '.env.example'), example());
      ensureLocalSecrets(quiet, other);
      const a = parseEnv(envLocal());
      const b = parseEnv(readFileSync(join(other, '.env.local'), 'utf8'));
      for (const n of NAMES) expect(b[n]).not.toBe(a[n]);
    } finally {
      rmSync(other, { recursive: true, force: true });
    }
  });
});
