// fga:grant / fga:revoke, fga:deploy and fga:drain against the real OpenFGA (and Postgres): the
// exact lines the spec gives, answers asked again rather than inferred, refusals with reasons, and
// idempotent repeats. The cores run in-process with their output captured; each CLI also runs once
// for real.
import { spawn } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { OpenFgaClient } from '@openfga/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { canSubmit } from '../../src/fga/authorize.ts';
import { deployModel, writeEnvFile } from '../../src/fga/deploy.ts';
import { MEMBER_REFUSED, runGrantCli, USAGE } from '../../src/fga/grant.ts';
import { enqueueTuples, OUTBOX_DEAD_AFTER } from '../../src/fga/outbox.ts';
import type { TestDatabase } from '../support/db.ts';
import { ROOT, loadProjectEnv } from '../support/env.ts';
import type { TestStore } from '../support/fga.ts';
import { useHarness } from '../support/harness.ts';

const h = useHarness({ api: false });
let store: TestStore;
beforeAll(() => {
  store = h.store;
});

async function grant(...argv: string[]): Promise<{ code: number; out: string[]; err: string[] }> {
  const out: string[] = [];
  const err: string[] = [];
  const code = await runGrantCli(argv, () => store.client, { out: (l) => out.push(l), err: (l) => err.push(l) });
  return { code, out, err };
}

async function tuplesOn(org: string): Promise<string[]> {
  const r = await store.client.read({ object: `organization:${org}` });
  return r.tuples.map((t) => `${t.key.user} ${t.key.relation} ${t.key.object}`).sort();
}

function run(cmd: string, args: string[], env: Record<string, string | undefined>): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { cwd: ROOT, env: env as NodeJS.ProcessEnv, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

describe('fga:grant / fga:revoke', () => {
  it('grant submitter prints the spec line, and the tuple is stored', async () => {
    const r = await grant('grant', 'submitter', 'alice', 'acme');
    expect(r).toEqual({ code: 0, out: ['alice は acme のクロールを始められます (書いた: user:alice submitter organization:acme)'], err: [] });
    expect(await tuplesOn('acme')).toContain('user:alice submitter organization:acme');
    expect(await canSubmit(store.client, { subject: 'alice', organizations: ['acme'] }, 'acme')).toBe(true);
  });

  it('granting again (the tuple exists) does not crash and says the same', async () => {
    const r = await grant('grant', 'submitter', 'alice', 'acme');
    expect(r).toEqual({ code: 0, out: ['alice は acme のクロールを始められます (書いた: user:alice submitter organization:acme)'], err: [] });
  });

  it('revoke submitter prints the spec line, and the tuple is gone', async () => {
    const r = await grant('revoke', 'submitter', 'alice', 'acme');
    expect(r).toEqual({ code: 0, out: ['alice は acme のクロールを始められません (消した: user:alice submitter organization:acme)'], err: [] });
    expect(await tuplesOn('acme')).not.toContain('user:alice submitter organization:acme');
    expect(await canSubmit(store.client, { subject: 'alice', organizations: ['acme'] }, 'acme')).toBe(false);
  });

  it('revoking again (the tuple is missing) does not crash and says the same', async () => {
    const r = await grant('revoke', 'submitter', 'alice', 'acme');
    expect(r).toEqual({ code: 0, out: ['alice は acme のクロールを始められません (消した: user:alice submitter organization:acme)'], err: [] });
  });

  it('revoking submitter from someone still admin: still 始められます, and says another relation allows it', async () => {
    expect((await grant('grant', 'admin', 'bob', 'acme')).out).toEqual(['bob は acme のクロールを始められます (書いた: user:bob admin organization:acme)']);
    expect((await grant('grant', 'submitter', 'bob', 'acme')).code).toBe(0);
    const r = await grant('revoke', 'submitter', 'bob', 'acme');
    expect(r).toEqual({
      code: 0,
      out: ['bob は acme のクロールを始められます (消した: user:bob submitter organization:acme、ほかの関係で許されています)'],
      err: [],
    });
    const last = await grant('revoke', 'admin', 'bob', 'acme');
    expect(last.out).toEqual(['bob は acme のクロールを始められません (消した: user:bob admin organization:acme)']);
  });

  it('a grant is for that organization only', async () => {
    await grant('grant', 'admin', 'carol', 'acme');
    expect(await canSubmit(store.client, { subject: 'carol', organizations: ['globex'] }, 'globex')).toBe(false);
    const r = await grant('revoke', 'submitter', 'carol', 'globex');
    expect(r.out).toEqual(['carol は globex のクロールを始められません (消した: user:carol submitter organization:globex)']);
  });

  it('member is refused with the reason, and nothing is written', async () => {
    for (const action of ['grant', 'revoke']) {
      const r = await grant(action, 'member', 'dave', 'initech');
      expect(r.code).toBe(2);
      expect(r.out).toEqual([]);
      expect(r.err).toEqual([`fga:${action}: refused: ${MEMBER_REFUSED}`]);
      expect(r.err[0]).toContain('membership comes from the identity provider');
    }
    expect(await tuplesOn('initech')).toEqual([]);
  });

  it.each([
    [['grant', 'owner', 'dave', 'initech'], 'unknown relation "owner"'],
    [['grant', 'submitter', 'dave'], 'missing <org>'],
    [['revoke'], 'missing <relation>'],
  ])('%j: usage and a non-zero exit, nothing written', async (argv, reason) => {
    const r = await grant(...argv);
    expect(r.code).toBe(2);
    expect(r.out).toEqual([]);
    expect(r.err).toHaveLength(1);
    expect(r.err[0]).toContain(reason);
    expect(r.err[0]).toContain(USAGE);
    expect(await tuplesOn('initech')).toEqual([]);
  });

  it('OpenFGA refusing the write is an error exit, not a line', async () => {
    const out: string[] = [];
    const err: string[] = [];
    const wrongStore = new OpenFgaClient({ apiUrl: store.apiUrl, storeId: '01ARZ3NDEKTSV4RRFFQ69G5FAV', authorizationModelId: store.modelId });
    const code = await runGrantCli(['grant', 'submitter', 'erin', 'acme'], () => wrongStore, { out: (l) => out.push(l), err: (l) => err.push(l) });
    expect(code).toBe(1);
    expect(out).toEqual([]);
    expect(err[0]).toMatch(/^fga:grant: /);
  });

  it('the real CLI: npm run fga:grant / fga:revoke', { timeout: 180_000 }, async () => {
    const env = { ...process.env, CAPTURE_LEDGER_FGA_STORE_ID: store.storeId, CAPTURE_LEDGER_FGA_MODEL_ID: store.modelId };
    const g = await run('npm', ['run', '--silent', 'fga:grant', 'submitter', 'frank', 'acme'], env);
    expect(g.stdout).toBe('frank は acme のクロールを始められます (書いた: user:frank submitter organization:acme)\n');
    expect(g.code).toBe(0);
    const r = await run('npm', ['run', '--silent', 'fga:revoke', 'submitter', 'frank', 'acme'], env);
    expect(r.stdout).toBe('frank は acme のクロールを始められません (消した: user:frank submitter organization:acme)\n');
    expect(r.code).toBe(0);
    const m = await run('npm', ['run', '--silent', 'fga:grant', 'member', 'frank', 'acme'], env);
    expect(m.code).not.toBe(0);
    expect(m.stdout).toBe('');
    expect(m.stderr).toContain('membership comes from the identity provider');
  });
});

describe('fga:deploy', () => {
  loadProjectEnv();
  const apiUrl = process.env.CAPTURE_LEDGER_FGA_API_URL!;
  const model = readFileSync(join(ROOT, 'fga/model.fga'), 'utf8');
  const dirs: string[] = [];
  const storeNames: string[] = [];
  afterAll(async () => {
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
    // the stores these tests made by name (listing pages are small on a test server)
    const admin = new OpenFgaClient({ apiUrl });
    let continuationToken: string | undefined;
    do {
      const page = await admin.listStores({ pageSize: 100, continuationToken });
      for (const s of page.stores) if (storeNames.includes(s.name)) await admin.deleteStore({ storeId: s.id });
      continuationToken = page.continuation_token || undefined;
    } while (continuationToken);
  });
  const tempDir = (): string => {
    const d = mkdtempSync(join(tmpdir(), 'fga-deploy-'));
    dirs.push(d);
    return d;
  };

  it('creates the store and the model once, then reuses both', async () => {
    const storeName = `deploy-${randomBytes(4).toString('hex')}`;
    storeNames.push(storeName);
    const first = await deployModel({ apiUrl, storeName });
    expect(first).toMatchObject({ createdStore: true, createdModel: true });
    const again = await deployModel({ apiUrl, storeName });
    expect(again).toEqual({ storeId: first.storeId, modelId: first.modelId, createdStore: false, createdModel: false });
    // comments and layout are not a change
    const reformatted = `# a comment\n${model.replace(/\n\n/g, '\n')}`;
    expect(await deployModel({ apiUrl, storeName, modelDsl: reformatted })).toMatchObject({ modelId: first.modelId, createdModel: false });

    // a changed model mints a new id, pinned from then on
    const changed = model.replace('define can_submit: submitter or admin', 'define can_submit: admin');
    expect(changed).not.toBe(model);
    const next = await deployModel({ apiUrl, storeName, modelDsl: changed });
    expect(next).toMatchObject({ storeId: first.storeId, createdStore: false, createdModel: true });
    expect(next.modelId).not.toBe(first.modelId);
    const models = await new OpenFgaClient({ apiUrl, storeId: first.storeId }).readAuthorizationModels();
    expect(models.authorization_models.map((m) => m.id).sort()).toEqual([first.modelId, next.modelId].sort());
    // going back is a change too: the newest is what clients without a pin would see
    const back = await deployModel({ apiUrl, storeName });
    expect(back.createdModel).toBe(true);
  });

  it('writeEnvFile sets the two ids and keeps every other line', () => {
    const file = join(tempDir(), '.env.local');
    writeEnvFile(file, { CAPTURE_LEDGER_FGA_STORE_ID: 's1', CAPTURE_LEDGER_FGA_MODEL_ID: 'm1' });
    expect(readFileSync(file, 'utf8')).toBe('CAPTURE_LEDGER_FGA_STORE_ID=s1\nCAPTURE_LEDGER_FGA_MODEL_ID=m1\n');
    writeFileSync(file, '# mine\nCAPTURE_LEDGER_API_PORT=7171\nCAPTURE_LEDGER_FGA_MODEL_ID=old\nCAPTURE_LEDGER_FGA_MODEL_ID=older\n');
    writeEnvFile(file, { CAPTURE_LEDGER_FGA_STORE_ID: 's2', CAPTURE_LEDGER_FGA_MODEL_ID: 'm2' });
    expect(readFileSync(file, 'utf8')).toBe('# mine\nCAPTURE_LEDGER_API_PORT=7171\nCAPTURE_LEDGER_FGA_MODEL_ID=m2\nCAPTURE_LEDGER_FGA_STORE_ID=s2\n');
  });

  it('the real CLI runs with only the OpenFGA URL, prints the ids and writes them into the given .env.local', { timeout: 180_000 }, async () => {
    const dir = tempDir();
    const envLocal = join(dir, '.env.local');
    writeFileSync(envLocal, 'CAPTURE_LEDGER_DEV_IDENTITY=1\n');
    const storeName = `deploy-cli-${randomBytes(4).toString('hex')}`;
    storeNames.push(storeName);
    const env = { PATH: process.env.PATH, HOME: process.env.HOME, CAPTURE_LEDGER_FGA_API_URL: apiUrl };
    const r = await run(process.execPath, ['src/cli/fga-deploy.ts', '--store-name', storeName, '--env-local', envLocal], env);
    expect(r.code).toBe(0);
    const m = /^CAPTURE_LEDGER_FGA_STORE_ID=(\S+)\nCAPTURE_LEDGER_FGA_MODEL_ID=(\S+)\n$/.exec(r.stdout);
    expect(m).not.toBeNull();
    expect(readFileSync(envLocal, 'utf8')).toBe(`CAPTURE_LEDGER_DEV_IDENTITY=1\nCAPTURE_LEDGER_FGA_STORE_ID=${m![1]}\nCAPTURE_LEDGER_FGA_MODEL_ID=${m![2]}\n`);
    // the ids work: a client pinned to them answers
    const pinned = new OpenFgaClient({ apiUrl, storeId: m![1], authorizationModelId: m![2] });
    expect((await pinned.check({ user: 'user:x', relation: 'can_submit', object: 'organization:y' })).allowed).toBe(false);

    const again = await run(process.execPath, ['src/cli/fga-deploy.ts', '--store-name', storeName, '--env-local', envLocal], env);
    expect(again.code).toBe(0);
    expect(again.stdout).toBe(r.stdout);
    expect(again.stderr).toContain('model unchanged');
  });

  it('refuses to write .env, and names a bad URL', { timeout: 180_000 }, async () => {
    const dir = tempDir();
    const envFile = join(dir, '.env');
    writeFileSync(envFile, 'KEEP=1\n');
    const r = await run(process.execPath, ['src/cli/fga-deploy.ts', '--store-name', 'never-made', '--env-local', envFile], {
      PATH: process.env.PATH,
      CAPTURE_LEDGER_FGA_API_URL: apiUrl,
    });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('refusing to write');
    expect(readFileSync(envFile, 'utf8')).toBe('KEEP=1\n');
    const bad = await run(process.execPath, ['src/cli/fga-deploy.ts', '--env-local', join(dir, 'x')], {
      PATH: process.env.PATH,
      CAPTURE_LEDGER_FGA_API_URL: '127.0.0.1:8080',
    });
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain('CAPTURE_LEDGER_FGA_API_URL="127.0.0.1:8080"');
  });
});

describe('fga:drain', () => {
  let t: TestDatabase;
  beforeAll(() => {
    t = h.tdb;
  });

  it('the real CLI delivers the queue and prints what it delivered', { timeout: 180_000 }, async () => {
    const job = `capture_job:${randomUUID()}`;
    await enqueueTuples(t.db, [
      { user: 'user:olivia', relation: 'owner', object: job },
      { user: 'organization:acme', relation: 'parent', object: job },
    ]);
    const env = { ...process.env, CAPTURE_LEDGER_DATABASE_URL: t.url, CAPTURE_LEDGER_FGA_STORE_ID: store.storeId, CAPTURE_LEDGER_FGA_MODEL_ID: store.modelId };
    const r = await run('npm', ['run', '--silent', 'fga:drain'], env);
    expect(r.stdout).toBe(
      `delivered write user:olivia owner ${job}\ndelivered write organization:acme parent ${job}\ndelivered 2, failed 0, remaining 0, dead 0\n`,
    );
    expect(r.code).toBe(0);
    expect(await t.db.selectFrom('fga_outbox').select('id').execute()).toEqual([]);
    expect((await store.client.read({ object: job })).tuples).toHaveLength(2);

    // a refused tuple: named on stderr, stays queued, exit 1
    await enqueueTuples(t.db, [{ user: 'user:olivia', relation: 'no_such_relation', object: job }]);
    const bad = await run('npm', ['run', '--silent', 'fga:drain'], env);
    expect(bad.code).toBe(1);
    expect(bad.stdout).toBe('delivered 0, failed 1, remaining 1, dead 0\n');
    expect(bad.stderr).toContain(`still queued write user:olivia no_such_relation ${job}: 400 `);

    // refused OUTBOX_DEAD_AFTER times: the dead letter, counted and named; --retry-dead queues it again
    await t.db
      .updateTable('fga_outbox')
      .set({ refusals: OUTBOX_DEAD_AFTER - 1 })
      .execute();
    const dead = await run('npm', ['run', '--silent', 'fga:drain'], env);
    expect(dead.code).toBe(1);
    expect(dead.stdout).toBe('delivered 0, failed 1, remaining 0, dead 1\n');
    expect(dead.stderr).toContain(`dead letter (refused ${OUTBOX_DEAD_AFTER} times) write user:olivia no_such_relation ${job}: 400 `);
    expect(dead.stderr).toContain('1 tuples are in the dead letter');
    const retried = await run('npm', ['run', '--silent', 'fga:drain', '--', '--retry-dead'], env);
    expect(retried.stdout).toBe('back in the queue from the dead letter: 1\ndelivered 0, failed 1, remaining 1, dead 0\n');
  });
});
