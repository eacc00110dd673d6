// eslint.config.js enforces the design: what a workflow file may import, Node builtins in
// workflows (all of node:module's builtinModules), and promises nobody awaits (type-aware). Each
// rule is run here on code that breaks it and on code that keeps it.
import { ESLint } from 'eslint';
import { beforeAll, describe, expect, it } from 'vitest';
import { ROOT } from '../support/env.ts';

let eslint: ESLint;
beforeAll(() => {
  // the probes are not files on disk: the project service takes them as they are given
  eslint = new ESLint({
    cwd: ROOT,
    overrideConfig: {
      languageOptions: {
        parserOptions: {
          projectService: {
            allowDefaultProject: ['src/*/*.probe.ts', 'src/*/*/*.probe.ts'],
            maximumDefaultProjectFileMatchCount_THIS_WILL_SLOW_DOWN_LINTING: 20,
          },
        },
      },
    },
  });
});

async function problems(path: string, code: string): Promise<string[]> {
  const [result] = await eslint.lintText(code, { filePath: ROOT + path });
  return result!.messages.map((m) => `${m.line} ${m.ruleId ?? 'parse'}`);
}

describe('eslint.config.js', { timeout: 180_000 }, () => {
  it('keeps workflow files to values from the workflow SDK, other workflow files, the domain, temporal.config.ts and the search-attribute keys', async () => {
    const allowed = [
      "import { proxyActivities, sleep } from '@temporalio/workflow';",
      "import { decideAfterLevel } from '../domain/crawl.ts';",
      "import { NON_RETRYABLE } from '../../temporal.config.ts';",
      "import { CRAWL_STATE_KEY } from '../temporal/search-attributes.ts';",
      "import { ReportQueue } from './report-queue.ts';",
      "import type { Activities } from '../activities/index.ts';",
      "import type { Db } from '../db/connect.ts';",
      'export const used = [proxyActivities, sleep, decideAfterLevel, NON_RETRYABLE, CRAWL_STATE_KEY, ReportQueue] as unknown as [Activities, Db];',
    ].join('\n');
    expect(await problems('src/workflows/allowed.probe.ts', allowed)).toEqual([]);

    const refused = [
      "import { createDb } from '../db/connect.ts';",
      "import { createActivities } from '../activities/index.ts';",
      "import { defineSearchAttributeKey } from '@temporalio/common';",
      "import pg from 'pg';",
      'export const used = [createDb, createActivities, defineSearchAttributeKey, pg];',
    ].join('\n');
    expect(await problems('src/workflows/refused.probe.ts', refused)).toEqual([
      '1 @typescript-eslint/no-restricted-imports',
      '2 @typescript-eslint/no-restricted-imports',
      '3 @typescript-eslint/no-restricted-imports',
      '4 @typescript-eslint/no-restricted-imports',
    ]);
  });

  it('keeps the capture tier (src/flow) to the contract and src/domain outside its own tree, and the ledger out of it', async () => {
    const allowed = [
      "import { CAPTURE_FORMATS } from '../domain/contract.ts';",
      "import { Pacer } from '../domain/pacing.ts';",
      "import { levelPrefix } from './level.ts';",
      'export const used = [CAPTURE_FORMATS, Pacer, levelPrefix];',
    ].join('\n');
    expect(await problems('src/flow/allowed.probe.ts', allowed)).toEqual([]);
    const refused = [
      "import { loadConfig } from '../config/env.ts';",
      "import { createS3 } from '../../s3/client.ts';",
      'export const used = [loadConfig, createS3];',
    ].join('\n');
    expect(await problems('src/flow/refused.probe.ts', refused)).toEqual([
      '1 @typescript-eslint/no-restricted-imports',
      '2 @typescript-eslint/no-restricted-imports',
    ]);
    // one folder down, ../config is the capture tier's own config; ../../s3 is the ledger's
    expect(await problems('src/flow/activities/refused.probe.ts', refused)).toEqual(['2 @typescript-eslint/no-restricted-imports']);
    const ledger = ["import { startFlow } from '../flow/server.ts';", 'export const used = [startFlow];'].join('\n');
    expect(await problems('src/api/uses-flow.probe.ts', ledger)).toEqual(['1 no-restricted-imports']);
    const domain = ["import { loadConfig } from '../config/env.ts';", 'export const used = [loadConfig];'].join('\n');
    expect(await problems('src/domain/impure.probe.ts', domain)).toEqual(['1 no-restricted-imports']);
  });

  it('holds the capture workflows to what their sandbox allows', async () => {
    const code = [
      "import { readFileSync } from 'node:fs';",
      "import { createCaptureS3 } from '../s3.ts';",
      "import { planSlices } from '../../domain/level-slices.ts';",
      'export const used = [readFileSync, createCaptureS3, planSlices, setTimeout];',
    ].join('\n');
    const found = await problems('src/flow/workflows/impure.probe.ts', code);
    // node:fs is refused both as a builtin and as a path outside the allowed ones
    expect(found).toEqual([
      '1 @typescript-eslint/no-restricted-imports',
      '1 @typescript-eslint/no-restricted-imports',
      '2 @typescript-eslint/no-restricted-imports',
      '4 no-restricted-globals',
    ]);
  });

  it('refuses every Node builtin in workflow files, with or without node:, and their clocks and randomness', async () => {
    const code = [
      "import { readFileSync } from 'fs';",
      "import { DatabaseSync } from 'node:sqlite';",
      "import { Worker } from 'worker_threads';",
      'export const used = [readFileSync, DatabaseSync, Worker, Math.random(), setTimeout];',
    ].join('\n');
    const found = await problems('src/workflows/builtins.probe.ts', code);
    for (const line of [1, 2, 3]) expect(found).toContain(`${line} @typescript-eslint/no-restricted-imports`);
    expect(found).toContain('4 no-restricted-properties');
    expect(found).toContain('4 no-restricted-globals');
  });

  it('refuses a promise nobody awaits, anywhere', async () => {
    const code = [
      'async function work(): Promise<void> {}',
      'export async function main(): Promise<void> {',
      '  work();',
      '  void work();',
      '  await work();',
      '}',
    ].join('\n');
    expect(await problems('src/api/floating.probe.ts', code)).toEqual(['3 @typescript-eslint/no-floating-promises']);
  });
});
