// Integration tests run against the real stack started by `npm run stack:up` (npm test does
// it). This checks each service answers, builds the migrated template database, bundles the
// workflows once for every worker the tests start, takes the OpenFGA stores of earlier runs out
// of OpenFGA's datastore (test/support/fga-datastore.ts), and tags the run: at the end it ends every
// workflow and schedule the run's task queues still have in the test namespace.
import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import pg from 'pg';
import type {} from 'vitest';
import type { TestProject } from 'vitest/node';
import { migrate } from '../../src/db/migrate.ts';
import { adminUrl, newTemplateName } from './db.ts';
import { purgeEarlierStores, purgeReport } from './fga-datastore.ts';
import { loadProjectEnv, ROOT } from './env.ts';
import { checkTestNamespace, endRun } from './temporal-run.ts';

async function reachable(name: string, url: string): Promise<void> {
  try {
    await fetch(url, { signal: AbortSignal.timeout(5000) });
  } catch (err) {
    throw new Error(`${name} does not answer at ${url} (${(err as Error).message}); run \`npm run stack:up\` and read .stack/logs/`);
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  loadProjectEnv();
  const base = process.env.CAPTURE_LEDGER_DATABASE_URL!;
  await reachable('OpenFGA', `${process.env.CAPTURE_LEDGER_FGA_API_URL}/healthz`);
  await reachable('SeaweedFS S3', process.env.CAPTURE_LEDGER_S3_ENDPOINT!);

  const admin = new pg.Client({ connectionString: adminUrl(base) });
  try {
    await admin.connect();
  } catch (err) {
    throw new Error(`Postgres does not answer at ${adminUrl(base)} (${(err as Error).message}); run \`npm run stack:up\``);
  }
  await checkTestNamespace();
  const purged = purgeReport(await purgeEarlierStores());
  if (purged !== undefined) console.log(purged);
  const template = newTemplateName();
  const runTag = template.slice(template.lastIndexOf('_') + 1);
  project.provide('testRunTag', runTag);
  try {
    await admin.query(`CREATE DATABASE ${template}`);
  } finally {
    await admin.end();
  }
  await migrate(adminUrl(base, template));
  project.provide('templateDb', template);

  const workflows = ROOT + 'src/workflows/index.ts';
  if (existsSync(workflows)) {
    const { bundleWorkflowCode } = await import('@temporalio/worker');
    const { code } = await bundleWorkflowCode({ workflowsPath: workflows, logger: undefined });
    mkdirSync(ROOT + '.stack/test', { recursive: true });
    const path = ROOT + `.stack/test/workflow-bundle-${template}.js`;
    writeFileSync(path, code);
    project.provide('workflowBundlePath', path);
    // the capture tier's workflows (the reference flow's level and slice workflows)
    const flow = await bundleWorkflowCode({ workflowsPath: ROOT + 'src/flow/workflows/index.ts', logger: undefined });
    const flowPath = ROOT + `.stack/test/flow-workflow-bundle-${template}.js`;
    writeFileSync(flowPath, flow.code);
    project.provide('flowWorkflowBundlePath', flowPath);
  }
  return async () => {
    const left = await endRun(runTag);
    if (left.workflows.length + left.schedules.length)
      console.log(`test run ${runTag}: ended ${left.workflows.length} workflows and ${left.schedules.length} schedules the tests left running`);
    rmSync(ROOT + `.stack/test/workflow-bundle-${template}.js`, { force: true });
    rmSync(ROOT + `.stack/test/flow-workflow-bundle-${template}.js`, { force: true });
    const c = new pg.Client({ connectionString: adminUrl(base) });
    await c.connect();
    try {
      await c.query(`DROP DATABASE IF EXISTS ${template} WITH (FORCE)`);
    } finally {
      await c.end();
    }
  };
}

declare module 'vitest' {
  export interface ProvidedContext {
    workflowBundlePath: string;
    flowWorkflowBundlePath: string;
    templateDb: string;
    testRunTag: string;
  }
}
