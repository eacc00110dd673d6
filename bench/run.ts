// `npm run bench [-- name ...]`: runs every bench/*.ts module that exports `run()` (in name order,
// one after another so they do not disturb each other's figures) and prints each record it
// returns as one JSON line. A failing bench prints {"bench": name, "error": ...} and the run
// exits 1 after the others have finished. First, the OpenFGA stores earlier runs left (deleted
// ones, old test ones) are taken out of the stack's datastore (test/support/fga-datastore.ts): the
// bare Write beside the outbox's figure slows as OpenFGA's tuple table grows, and a developer's
// figures should not depend on how many runs came before (the outbox bench's preloaded store,
// which it reuses, stays).
import { readdirSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { purgeEarlierStores, purgeReport } from '../test/support/fga-datastore.ts';

const DIR = fileURLToPath(new URL('./', import.meta.url));
const only = new Set(process.argv.slice(2));
const files = readdirSync(DIR)
  .filter((f) => f.endsWith('.ts') && f !== 'run.ts' && !f.endsWith('.d.ts'))
  .sort();

// a bench of pure logic (address-policy, pacing, robots) runs with the stack down: no datastore then
try {
  const purged = purgeReport(await purgeEarlierStores());
  if (purged !== undefined) console.error(purged);
} catch (err) {
  console.error(`OpenFGA's datastore was not purged (${(err as Error).message}); benches go on`);
}

let failed = false;
for (const file of files) {
  const name = file.replace(/\.ts$/, '');
  if (only.size > 0 && !only.has(name)) continue;
  const mod = (await import(pathToFileURL(DIR + file).href)) as { run?: () => Promise<unknown> | unknown };
  if (typeof mod.run !== 'function') continue;
  const started = Date.now();
  try {
    const out = await mod.run();
    for (const record of Array.isArray(out) ? out : [out]) console.log(JSON.stringify(record));
  } catch (err) {
    failed = true;
    console.log(JSON.stringify({ bench: name, error: (err as Error).message ?? String(err) }));
  }
  console.error(`bench ${name}: ${((Date.now() - started) / 1000).toFixed(1)} s`);
}
process.exitCode = failed ? 1 : 0;
