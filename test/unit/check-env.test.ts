// scripts/check-env.mjs keeps .env.example in step with the code: run on this repository it must
// pass, and run on a small fixture it must name each difference and exit 1.
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const SCRIPT = join(ROOT, 'scripts/check-env.mjs');
// Spelled in two parts so this file never reads as a variable to anything grepping for them.
const P = 'CAPTURE_LEDGER' + '_';

function run(args: string[] = []): { status: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [SCRIPT, ...args], { encoding: 'utf8' });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

const dirs: string[] = [];
function fixture(files: Record<string, string>): string {
  const root = mkdtempSync(join(tmpdir(), 'check-env-'));
  dirs.push(root);
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), text);
  }
  return root;
}
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

describe('check-env', () => {
  it('passes on this repository: .env.example declares exactly what src/ and scripts/ read', () => {
    const r = run();
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(/^check-env: \.env\.example declares exactly the \d+ variables the code reads\n$/);
  });

  it('passes on a fixture that agrees', () => {
    const root = fixture({
      '.env.example': `# ${P}IN_A_COMMENT=1 declares nothing\n${P}A=1\n${P}B=\n`,
      'src/config/env.ts': `env.${P}A; env['${P}B'];`,
    });
    expect(run(['--root', root]).status).toBe(0);
  });

  it('names a variable the code reads that .env.example does not declare, with where it is read', () => {
    const root = fixture({
      '.env.example': `${P}A=1\n`,
      'src/config/env.ts': `env.${P}A;`,
      'scripts/stack.mjs': `process.env.${P}NEW_PORT`,
    });
    const r = run(['--root', root]);
    expect(r.status).toBe(1);
    expect(r.stderr).toBe(`check-env: ${P}NEW_PORT is read by the code (scripts/stack.mjs) but not declared in .env.example\n`);
  });

  it('names a variable .env.example declares that nothing reads', () => {
    const root = fixture({
      '.env.example': `${P}A=1\n${P}STALE=x\n`,
      'src/a.ts': `env.${P}A;`,
    });
    const r = run(['--root', root]);
    expect(r.status).toBe(1);
    expect(r.stderr).toBe(`check-env: ${P}STALE is declared in .env.example but the code never reads it\n`);
  });

  it('reports both directions at once', () => {
    const root = fixture({
      '.env.example': `${P}OLD=1\n`,
      'src/a.ts': `env.${P}NEW;`,
    });
    const r = run(['--root', root]);
    expect(r.status).toBe(1);
    expect(r.stderr).toContain(`${P}NEW is read by the code (src/a.ts)`);
    expect(r.stderr).toContain(`${P}OLD is declared in .env.example but the code never reads it`);
  });

  it('a commented-out declaration does not count as declared', () => {
    const root = fixture({
      '.env.example': `# ${P}A=1\n`,
      'src/a.ts': `env.${P}A;`,
    });
    const r = run(['--root', root]);
    expect(r.status).toBe(1);
    expect(r.stderr).toContain(`${P}A is read by the code (src/a.ts) but not declared`);
  });

  it('ignores test files and prefixes being assembled', () => {
    const root = fixture({
      '.env.example': `${P}A=1\n`,
      'src/a.ts': `env.${P}A; const prefix = '${P}S3_';`,
      'src/a.test.ts': `env.${P}ONLY_IN_A_TEST;`,
    });
    expect(run(['--root', root]).status).toBe(0);
  });

  it('fails when .env.example is missing', () => {
    const root = fixture({ 'src/a.ts': '' });
    const r = run(['--root', root]);
    expect(r.status).toBe(1);
    expect(r.stderr).toContain('.env.example does not exist');
  });
});
