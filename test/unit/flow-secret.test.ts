// npm start generates the capture flow's client secret into .env.local when nothing sets one,
// and leaves a secret that is set alone (scripts/lib/env.mjs ensureFlowClientSecret).
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ensureFlowClientSecret } from '../../scripts/lib/env.mjs';
import { MIN_FLOW_SECRET_LENGTH } from '../../src/domain/flow-client.ts';

const NAME = 'CAPTURE_LEDGER' + '_FLOW_CLIENT_SECRET';
let root: string;
let saved: string | undefined;
const quiet = () => undefined;

beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), 'flow-secret-'));
  writeFileSync(join(root, '.env.example'), `${NAME}=\n`);
  saved = process.env[NAME];
  delete process.env[NAME];
});
afterEach(() => {
  rmSync(root, { recursive: true, force: true });
  if (saved !== undefined) process.env[NAME] = saved;
});

const envLocal = () => readFileSync(join(root, '.env.local'), 'utf8');

describe('ensureFlowClientSecret', () => {
  it('writes a fresh secret into a new .env.local, readable by its owner only, and keeps it the next time', () => {
    expect(ensureFlowClientSecret(quiet, root)).toBe(true);
    const first = envLocal();
    const secret = new RegExp(`^${NAME}=([A-Za-z0-9_-]+)\\n$`).exec(first)?.[1];
    expect(secret?.length).toBeGreaterThanOrEqual(MIN_FLOW_SECRET_LENGTH);
    expect(statSync(join(root, '.env.local')).mode & 0o077).toBe(0);
    expect(ensureFlowClientSecret(quiet, root)).toBe(false);
    expect(envLocal()).toBe(first);
  });

  it('appends to an existing .env.local, keeping its lines, on a line of its own', () => {
    writeFileSync(join(root, '.env.local'), 'OTHER=1');
    ensureFlowClientSecret(quiet, root);
    expect(envLocal()).toMatch(new RegExp(`^OTHER=1\\n${NAME}=[A-Za-z0-9_-]{43}\\n$`));
  });

  it('writes nothing when .env or the environment sets one', () => {
    writeFileSync(join(root, '.env'), `${NAME}=set-in-dot-env-0123456789abcdef0123\n`);
    expect(ensureFlowClientSecret(quiet, root)).toBe(false);
    rmSync(join(root, '.env'));
    process.env[NAME] = 'set-in-the-environment-0123456789abcdef';
    expect(ensureFlowClientSecret(quiet, root)).toBe(false);
    expect(() => envLocal()).toThrow(/ENOENT/);
  });

  it('two fresh checkouts get different secrets', () => {
    ensureFlowClientSecret(quiet, root);
    const other = mkdtempSync(join(tmpdir(), 'flow-secret-'));
    try {
      writeFileSync(join(other, '.env.example'), `${NAME}=\n`);
      ensureFlowClientSecret(quiet, other);
      expect(readFileSync(join(other, '.env.local'), 'utf8')).not.toBe(envLocal());
    } finally {
      rmSync(other, { recursive: true, force: true });
    }
  });
});
