// eslint.config.js enforces the design: what a workflow file may import, Node builtins in
// workflows (all of node:module's builtinModules), and promises nobody awaits (type-aware). Each
// rule is run here on code that breaks it and on code that keeps it.
import { ESLint } from 'eslint';
import { beforeAll, describe, expect, it } from 'vitest';
import { ROOT } from '../support/env.ts';

let eslint: ESLint;
beforeAll(() => {
  // the probes are not files on disk: the project service takes them as they are given
  eslint = new ESLint({ cwd: ROOT, overrideConfig: { languageOptions: { parserOptions: { projectService: { allowDefaultProject: ['src/*/*.probe.ts'] } } } } });
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
    expect(await problems('src/workflows/refused.probe.ts', refused)).toEqual(['1 @typescript-eslint/no-restricted-imports', '2 @typescript-eslint/no-restricted-imports', '3 @typescript-eslint/no-restricted-imports', '4 @typescript-eslint/no-restricted-imports']);
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
    const code = ['async function work(): Promise<void> {}', 'export async function main(): Promise<void> {', '  work();', '  void work();', '  await work();', '}'].join('\n');
    expect(await problems('src/api/floating.probe.ts', code)).toEqual(['3 @typescript-eslint/no-floating-promises']);
  });
});
