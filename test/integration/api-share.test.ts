// Sharing outside the organization: fga:share writes a viewer tuple with non_expired_grant; the
// share is visible inside its window (assertion 5) and lapsed after it (assertion 6) through the
// API, and fga:unshare stops signing at once.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { share, unshare } from '../../src/cli/fga-share.ts';
import type { Archive } from '../../src/db/types.ts';
import { devHeaders, testApiConfig } from '../support/api.ts';
import { ROOT } from '../support/env.ts';
import { useHarness } from '../support/harness.ts';
import { drain, insertArchive, insertJob } from '../support/ledger.ts';

const run = promisify(execFile);

const h = useHarness();
let archive: Archive;
let other: Archive;

const sign = async (id: string, subject: string, orgs: string[] = []) =>
  (await fetch(`${h.api.url}/api/archives/${id}/url`, { method: 'POST', headers: devHeaders(subject, orgs) })).status;
const listed = async (subject: string) =>
  ((await (await fetch(`${h.api.url}/api/archives`, { headers: devHeaders(subject) })).json()) as { id: string }[]).map((a) => a.id);

// every test has archives of its own and takes back what it shared, so none depends on another
beforeEach(async () => {
  const job = await insertJob(h.tdb.db, { orgId: 'acme', submittedBy: 'alice' });
  archive = await insertArchive(h.tdb.db, { crawlId: job, bucket: h.bucket });
  other = await insertArchive(h.tdb.db, { crawlId: job, bucket: h.bucket });
  await drain(h.tdb.db, h.store.client);
});

afterEach(async () => {
  const { tuples } = await h.store.client.read({ object: `archive:${archive.id}` });
  const shares = tuples.filter((t) => t.key.relation === 'viewer').map((t) => ({ user: t.key.user, relation: 'viewer', object: t.key.object }));
  if (shares.length > 0) await h.store.client.write({ deletes: shares });
});

const deps = () => ({ db: h.tdb.db, fga: h.store.client });

describe('fga:share / fga:unshare through the API', () => {
  it('an outsider sees nothing before a share', async () => {
    expect(await sign(archive.id, 'olga')).toBe(404);
    expect(await listed('olga')).toEqual([]);
  });

  it('a share is visible inside its window (assertion 5), for that archive only, and cannot delete', async () => {
    const r = await share(deps(), archive.id, 'olga', '1h');
    expect(r).toMatchObject({ subject: 'olga', grantDuration: '3600s', canViewNow: true, replaced: false });
    expect(await sign(archive.id, 'olga')).toBe(200);
    expect(await sign(other.id, 'olga')).toBe(404);
    expect(await listed('olga')).toEqual([archive.id]);
    const tuples = await h.store.client.read({ user: 'user:olga', relation: 'viewer', object: `archive:${archive.id}` });
    expect(tuples.tuples[0]!.key.condition).toMatchObject({ name: 'non_expired_grant', context: { grant_time: r.grantTime, grant_duration: '3600s' } });
    const del = await h.store.client.check({
      user: 'user:olga',
      relation: 'can_delete',
      object: `archive:${archive.id}`,
      context: { current_time: new Date().toISOString() },
    });
    expect(del.allowed).toBe(false);
  });

  it('the same tuple has lapsed after its window (assertion 6): a grant written 2 h ago for 1 h', async () => {
    expect(await share(deps(), archive.id, 'olga', '1h')).toMatchObject({ canViewNow: true, replaced: false });
    const r = await share(deps(), archive.id, 'olga', '1h', new Date(Date.now() - 2 * 3600_000));
    expect(r).toMatchObject({ canViewNow: false, replaced: true });
    expect(await sign(archive.id, 'olga')).toBe(404);
    expect(await listed('olga')).toEqual([]);
  });

  it('a short share lapses by itself while nobody touches it', async () => {
    await share(deps(), archive.id, 'pete', '3s');
    expect(await sign(archive.id, 'pete')).toBe(200);
    await new Promise((r) => setTimeout(r, 3500));
    expect(await sign(archive.id, 'pete')).toBe(404);
    // the tuple is still there: nothing had to sweep it
    expect((await h.store.client.read({ user: 'user:pete', relation: 'viewer', object: `archive:${archive.id}` })).tuples).toHaveLength(1);
  });

  it('unshare stops signing at once', async () => {
    await share(deps(), archive.id, 'quinn', '7d');
    expect(await sign(archive.id, 'quinn')).toBe(200);
    const r = await unshare(deps(), archive.id, 'user:quinn');
    expect(r).toEqual({ archiveId: archive.id, subject: 'quinn', deleted: true, canViewNow: false });
    expect(await sign(archive.id, 'quinn')).toBe(404);
  });

  it('refuses an unknown archive, a bad duration or user, writing nothing', async () => {
    await share(deps(), archive.id, 'olga', '1h');
    await share(deps(), archive.id, 'pete', '1h');
    await expect(share(deps(), '00000000-0000-4000-8000-000000000000', 'olga', '1h')).rejects.toThrow(/no archive/);
    await expect(share(deps(), 'nope', 'olga', '1h')).rejects.toThrow(/not a UUID/);
    await expect(share(deps(), archive.id, 'olga', '1w')).rejects.toThrow(/duration/);
    await expect(share(deps(), archive.id, 'organization:acme', '1h')).rejects.toThrow(/not a valid name/);
    const all = await h.store.client.read({ object: `archive:${archive.id}` });
    expect(
      all.tuples
        .filter((t) => t.key.relation === 'viewer')
        .map((t) => t.key.user)
        .sort(),
    ).toEqual(['user:olga', 'user:pete']);
  });

  it('npm run fga:share / fga:unshare print what they wrote and the answer asked again', async () => {
    const config = testApiConfig({ tdb: h.tdb, store: h.store, identity: 'dev' });
    const env = {
      ...process.env,
      CAPTURE_LEDGER_DATABASE_URL: config.databaseUrl,
      CAPTURE_LEDGER_FGA_STORE_ID: config.fga.storeId,
      CAPTURE_LEDGER_FGA_MODEL_ID: config.fga.modelId,
    };
    const shared = await run(process.execPath, ['src/cli/fga-share.ts', 'share', archive.id, 'rita', '15m'], { cwd: ROOT, env });
    expect(shared.stdout).toContain(`shared archive:${archive.id} with user:rita until`);
    expect(shared.stdout).toContain('grant_duration: 900s');
    expect(shared.stdout).toContain('user:rita can view it now');
    expect(await sign(archive.id, 'rita')).toBe(200);
    const unshared = await run(process.execPath, ['src/cli/fga-share.ts', 'unshare', archive.id, 'rita'], { cwd: ROOT, env });
    expect(unshared.stdout).toContain(`unshared archive:${archive.id} with user:rita`);
    expect(unshared.stdout).toContain('user:rita cannot view it');
    expect(await sign(archive.id, 'rita')).toBe(404);
    const bad = await run(process.execPath, ['src/cli/fga-share.ts', 'share', archive.id, 'rita', 'forever'], { cwd: ROOT, env }).catch(
      (e: { code: number; stderr: string }) => e,
    );
    expect(bad).toMatchObject({ code: 2 });
    expect((bad as { stderr: string }).stderr).toContain('duration "forever"');
    const usage = await run(process.execPath, ['src/cli/fga-share.ts', 'share', archive.id], { cwd: ROOT, env }).catch(
      (e: { code: number; stderr: string }) => e,
    );
    expect(usage).toMatchObject({ code: 2 });
  });
});
