#!/usr/bin/env node
// npm run fga:test [-- <tests.yaml>]: runs the assertions in fga/model.fga.yaml against
// fga/model.fga with the fga CLI (`fga model test`), which evaluates them in an in-memory OpenFGA
// of its own: no server needed. Exits non-zero when any assertion fails or the CLI is missing.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { delimiter, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../', import.meta.url));

/** A binary already on PATH wins over the one `npm run tools` builds into .tools/bin. */
function findFga(env = process.env) {
  for (const dir of (env.PATH ?? '').split(delimiter)) {
    if (dir && existsSync(join(dir, 'fga'))) return join(dir, 'fga');
  }
  const local = join(ROOT, '.tools/bin/fga');
  return existsSync(local) ? local : undefined;
}

function main() {
  const tests = resolve(process.argv[2] ?? join(ROOT, 'fga/model.fga.yaml'));
  if (!existsSync(tests)) {
    console.error(`fga:test: no such file ${tests}`);
    return 2;
  }
  const fga = findFga();
  if (fga === undefined) {
    console.error('fga:test: the fga CLI is not on PATH and not in .tools/bin (run `npm run tools`)');
    return 2;
  }
  const run = spawnSync(fga, ['model', 'test', '--tests', tests], { stdio: 'inherit' });
  if (run.error) {
    console.error(`fga:test: could not run ${fga}: ${run.error.message}`);
    return 2;
  }
  if (run.status !== 0) {
    console.error(`fga:test: assertions in ${tests} FAILED (fga exited ${run.status ?? run.signal})`);
    return run.status || 1;
  }
  return 0;
}

process.exitCode = main();
