// harness: not used because it tests the targets CLI on a test database alone.
// npm run targets -- add|list|disable <org> <url>: the only writer of capture_targets.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { runTargets } from '../../src/cli/targets-command.ts';
import { enabledTargetUrls } from '../../src/store/targets.ts';
import { createTestDatabase, type TestDatabase } from '../support/db.ts';
import { ROOT } from '../support/env.ts';

let tdb: TestDatabase;
beforeAll(async () => {
  tdb = await createTestDatabase();
});
afterAll(async () => {
  await tdb?.drop();
});

async function cli(...argv: string[]): Promise<{ code: number; out: string[]; err: string[] }> {
  const out: string[] = [];
  const err: string[] = [];
  const code = await runTargets(tdb.db, argv, { out: (l) => out.push(l), err: (l) => err.push(l) });
  return { code, out, err };
}

describe('targets', () => {
  it('adds, lists, disables and re-enables, per organization', async () => {
    expect(await cli('add', 'acme', 'https://Example.test/a#frag')).toEqual({ code: 0, out: ['added https://example.test/a for acme'], err: [] });
    expect((await cli('add', 'acme', 'https://example.test/b')).code).toBe(0);
    expect(await cli('add', 'acme', 'https://example.test/a')).toEqual({
      code: 0,
      out: ['https://example.test/a was already listed for acme; enabled'],
      err: [],
    });
    expect((await cli('add', 'other', 'https://other.test/')).code).toBe(0);
    expect(await cli('disable', 'acme', 'https://example.test/a')).toEqual({ code: 0, out: ['disabled https://example.test/a for acme'], err: [] });
    expect(await cli('list', 'acme')).toEqual({ code: 0, out: ['disabled  https://example.test/a', 'enabled   https://example.test/b'], err: [] });
    expect(await enabledTargetUrls(tdb.db, 'acme')).toEqual(['https://example.test/b']);
    expect(await enabledTargetUrls(tdb.db, 'other')).toEqual(['https://other.test/']);
    expect((await cli('add', 'acme', 'https://example.test/a')).code).toBe(0);
    expect(await enabledTargetUrls(tdb.db, 'acme')).toEqual(['https://example.test/a', 'https://example.test/b']);
    expect(await cli('list', 'nobody')).toEqual({ code: 0, out: ['no targets for nobody'], err: [] });
  });

  it('refuses what it cannot do, with the usage', async () => {
    expect(await cli('disable', 'acme', 'https://never.test/')).toEqual({ code: 1, out: [], err: ['https://never.test/ is not a target of acme'] });
    for (const argv of [
      [],
      ['remove', 'acme', 'https://x.test/'],
      ['add', 'acme'],
      ['add', '', 'https://x.test/'],
      ['add', 'acme', 'ftp://x.test/'],
      ['add', 'acme', '/relative'],
      ['list', 'acme', 'extra'],
      ['add', 'acme', 'https://x.test/', 'more'],
    ]) {
      const r = await cli(...argv);
      expect(r.code, JSON.stringify(argv)).toBe(2);
      expect(r.err.join('\n')).toContain('usage: npm run targets --');
    }
    expect(await enabledTargetUrls(tdb.db, 'acme')).not.toContain('https://x.test/');
  });

  it('npm run targets runs the same command against the configured database', async () => {
    const run = promisify(execFile);
    const env = { ...process.env, CAPTURE_LEDGER_DATABASE_URL: tdb.url, CAPTURE_LEDGER_FGA_STORE_ID: 'x', CAPTURE_LEDGER_FGA_MODEL_ID: 'x' };
    const added = await run('npm', ['run', '--silent', 'targets', '--', 'add', 'npmorg', 'https://npm.test/'], { cwd: ROOT, env });
    expect(added.stdout.trim()).toBe('added https://npm.test/ for npmorg');
    const listed = await run('npm', ['run', '--silent', 'targets', '--', 'list', 'npmorg'], { cwd: ROOT, env });
    expect(listed.stdout.trim()).toBe('enabled   https://npm.test/');
    const bad = await run('npm', ['run', '--silent', 'targets', '--', 'frob'], { cwd: ROOT, env }).catch((e: { code: number; stderr: string }) => e);
    expect((bad as { code: number }).code).toBe(2);
  });
});
