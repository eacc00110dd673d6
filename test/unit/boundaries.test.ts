// .dependency-cruiser.mjs writes the layering down; `npm run lint` runs it over src/. Each rule is
// run here on a small tree that breaks it and on one that keeps it, so a rule that stops matching
// (a renamed folder, a regex slip) fails a test instead of passing every tree silently.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { cruise } from 'dependency-cruiser';
import { afterEach, describe, expect, it } from 'vitest';
import { ROOT } from '../support/env.ts';

const config = ((await import(ROOT + '.dependency-cruiser.mjs')) as { default: { forbidden: { name: string }[] } }).default;

let tree: string | undefined;
afterEach(() => {
  if (tree !== undefined) rmSync(tree, { recursive: true, force: true });
  tree = undefined;
});

/** The rule names dependency-cruiser reports for a tree of files (path → source). */
async function violations(files: Record<string, string>): Promise<string[]> {
  tree = mkdtempSync(join(tmpdir(), 'boundaries-'));
  for (const [path, source] of Object.entries(files)) {
    mkdirSync(dirname(join(tree, path)), { recursive: true });
    writeFileSync(join(tree, path), source);
  }
  writeFileSync(join(tree, 'tsconfig.json'), JSON.stringify({ compilerOptions: { allowImportingTsExtensions: true, noEmit: true, module: 'nodenext' } }));
  const previous = process.cwd();
  process.chdir(tree);
  try {
    const result = await cruise(['src'], {
      validate: true,
      ruleSet: { forbidden: config.forbidden } as never,
      doNotFollow: { path: 'node_modules' },
      tsPreCompilationDeps: false,
    });
    const output = result.output as { summary: { violations: { rule: { name: string } }[] } };
    return [...new Set(output.summary.violations.map((v) => v.rule.name))].sort();
  } finally {
    process.chdir(previous);
  }
}

describe('.dependency-cruiser.cjs', { timeout: 60_000 }, () => {
  it('refuses a workflow that reaches a Node builtin through a domain module, and takes one that does not', async () => {
    const hash = "import { createHash } from 'node:crypto';\nexport const h = (s: string) => createHash('sha256').update(s).digest('hex');\n";
    expect(
      await violations({
        'src/domain/hash.ts': hash,
        'src/domain/plan.ts': "import { h } from './hash.ts';\nexport const plan = (s: string) => h(s);\n",
        'src/workflows/crawl.ts': "import { plan } from '../domain/plan.ts';\nexport const crawl = () => plan('x');\n",
      }),
    ).toEqual(['workflow-sandbox']);
    expect(
      await violations({
        'src/domain/hash.ts': hash,
        'src/domain/plan.ts': 'export const plan = (s: string) => s.length;\n',
        'src/workflows/crawl.ts': "import { plan } from '../domain/plan.ts';\nexport const crawl = () => plan('x');\n",
      }),
    ).toEqual([]);
  });

  it('lets a workflow import an activity module as a type only', async () => {
    const activity = "import { readFileSync } from 'node:fs';\nexport const read = () => readFileSync('/x');\n";
    expect(
      await violations({
        'src/activities/io.ts': activity,
        'src/workflows/w.ts': "import { read } from '../activities/io.ts';\nexport const w = () => read();\n",
      }),
    ).toEqual(['workflow-sandbox', 'workflow-sandbox-no-io']);
    expect(
      await violations({
        'src/activities/io.ts': activity,
        'src/workflows/w.ts': "import type { read } from '../activities/io.ts';\nexport type W = typeof read;\nexport const w = 1;\n",
      }),
    ).toEqual([]);
  });

  it('keeps src/domain from importing anything above it', async () => {
    expect(
      await violations({
        'src/config/env.ts': 'export const env = 1;\n',
        'src/domain/contract.ts': "import { env } from '../config/env.ts';\nexport const c = env;\n",
      }),
    ).toEqual(['domain-is-pure']);
  });

  it('keeps the capture tier and the ledger apart, except through the domain', async () => {
    expect(
      await violations({
        'src/store/db.ts': 'export const db = 1;\n',
        'src/flow/capture.ts': "import { db } from '../store/db.ts';\nexport const c = db;\n",
        'src/api/app.ts': "import { c } from '../flow/capture.ts';\nexport const a = c;\n",
      }),
    ).toEqual(['capture-imports-contract-and-domain', 'ledger-never-imports-capture']);
    expect(
      await violations({
        'src/domain/contract.ts': 'export const contract = 1;\n',
        'src/flow/capture.ts': "import { contract } from '../domain/contract.ts';\nexport const c = contract;\n",
        'src/api/app.ts': "import { contract } from '../domain/contract.ts';\nexport const a = contract;\n",
      }),
    ).toEqual([]);
  });

  it('keeps the ledger, the stores and the domain from importing the API, and lets the API import them', async () => {
    const errors = 'export class ConflictError extends Error {}\n';
    expect(
      await violations({
        'src/api/errors.ts': errors,
        'src/ledger/level.ts': "import { ConflictError } from '../api/errors.ts';\nexport const refuse = () => new ConflictError();\n",
        'src/store/crawls.ts': "import { ConflictError } from '../api/errors.ts';\nexport const refuse = () => new ConflictError();\n",
      }),
    ).toEqual(['below-http-never-imports-api']);
    expect(
      await violations({
        'src/domain/state-conflict.ts': 'export class StateConflictError extends Error {}\n',
        'src/ledger/level.ts': "import { StateConflictError } from '../domain/state-conflict.ts';\nexport const refuse = () => new StateConflictError();\n",
        'src/api/error-handler.ts': "import { refuse } from '../ledger/level.ts';\nexport const answer = refuse;\n",
      }),
    ).toEqual([]);
  });

  it('refuses an import cycle', async () => {
    expect(
      await violations({
        'src/store/a.ts': "import { b } from './b.ts';\nexport const a = () => b;\n",
        'src/store/b.ts': "import { a } from './a.ts';\nexport const b = () => a;\n",
      }),
    ).toEqual(['no-circular']);
  });
});
