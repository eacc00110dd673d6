// The API process as `npm run api` starts it, on this file's database and OpenFGA store: what it
// says at startup about whom it trusts (the spec: the dev headers are switched on explicitly "and
// the server warns loudly at startup"), and a misspelt setting stopping it, and the worker, with
// the variable and the bad value named before anything is served.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { afterEach, describe, expect, it } from 'vitest';
import { devHeaders, startTestIssuer, type TestIdentity } from '../support/api.ts';
import { processEnv, startApiProcess, stopApiProcesses, type LogLine } from '../support/api-process.ts';
import { ROOT } from '../support/env.ts';
import { useHarness } from '../support/harness.ts';

const h = useHarness({ api: false });
afterEach(stopApiProcesses);

const startApi = (identity: TestIdentity) => startApiProcess(h, identity);

const WARN = 40;
const warnings = (lines: LogLine[]): string[] => lines.filter((l) => l.level === WARN).map((l) => l.msg);

describe('the API at startup says whom it trusts', () => {
  it('the dev headers: a loud warning before it listens, and the headers are then trusted', async () => {
    const api = await startApi('dev');
    expect(warnings(api.lines)).toContainEqual(
      expect.stringMatching(/^!!! DEV IDENTITY IS ON \(CAPTURE_LEDGER_DEV_IDENTITY=1\).*Anyone who can reach this port can claim to be anyone/),
    );
    const me = await fetch(`${api.url}/api/me`, { headers: devHeaders('alice', ['acme']) });
    expect(me.status).toBe(200);
    expect(await me.json()).toMatchObject({ subject: 'alice', organizations: ['acme'] });
  });

  it('no identity: it says every /api request will be 401, and so it is', async () => {
    const api = await startApi('none');
    expect(warnings(api.lines)).toContain(
      'no identity configured (neither CAPTURE_LEDGER_OIDC_ISSUER nor CAPTURE_LEDGER_DEV_IDENTITY): every /api request will be 401',
    );
    expect((await fetch(`${api.url}/api/me`, { headers: devHeaders('alice', ['acme']) })).status).toBe(401);
  });

  it('JWTs with the dev headers also switched on: it says the headers are ignored, and they are', async () => {
    const issuer = await startTestIssuer();
    try {
      const api = await startApi({ oidc: { url: issuer.url }, devAlsoSet: true });
      expect(warnings(api.lines)).toContain(
        'CAPTURE_LEDGER_DEV_IDENTITY is set but ignored: CAPTURE_LEDGER_OIDC_ISSUER is configured, so only Bearer JWTs are accepted',
      );
      expect(warnings(api.lines).some((w) => w.startsWith('!!! DEV IDENTITY IS ON'))).toBe(false);
      expect((await fetch(`${api.url}/api/me`, { headers: devHeaders('mallory', ['acme']) })).status).toBe(401);
      const me = await fetch(`${api.url}/api/me`, { headers: await issuer.auth('alice', ['acme']) });
      expect(me.status).toBe(200);
      expect(await me.json()).toMatchObject({ subject: 'alice', organizations: ['acme'] });
    } finally {
      await issuer.close();
    }
  });
});

describe('a misspelt setting stops the process, naming the variable and the value', () => {
  for (const [who, main] of [
    ['capture-ledger api', 'src/api/main.ts'],
    ['capture-ledger worker', 'src/worker/main.ts'],
  ] as const) {
    it(`${main}: CAPTURE_LEDGER_CAPTURE_FORMATS=wacz,pdf exits 1 with one line, before its log begins`, async () => {
      const child = spawn(process.execPath, [main], {
        cwd: ROOT,
        env: processEnv(h, 'dev', { CAPTURE_LEDGER_CAPTURE_FORMATS: 'wacz,pdf' }),
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let stdout = '';
      let stderr = '';
      child.stdout!.on('data', (d: Buffer) => (stdout += d.toString()));
      child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
      const [code] = (await once(child, 'exit')) as [number | null];
      expect(code).toBe(1);
      expect(stderr).toBe(`${who}: CAPTURE_LEDGER_CAPTURE_FORMATS="wacz,pdf": unknown capture format "pdf"; allowed: png,webp,html,links,mhtml,wacz\n`);
      // not a line of its log: it stopped before it built anything
      expect(stdout).toBe('');
    });
  }
});
