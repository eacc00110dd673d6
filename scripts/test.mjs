// npm test [-- vitest args, e.g. a path]
// Sets up whatever is missing (Node 24, npm ci, .env, tools, the stack with OpenSearch,
// db:migrate, fga:deploy, Debian's chromium for the browser tests), then runs vitest on that node
// over the unit and integration projects against the real stack.
import { spawn } from 'node:child_process';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { ROOT } from './lib/env.mjs';
import { reexecOnProjectNode } from './lib/node.mjs';
import { ensureChromium, say, setup, parseProfileArgs } from './lib/setup.mjs';

await reexecOnProjectNode(say);

const { rest } = parseProfileArgs(process.argv.slice(2));
// the search tests run against a real OpenSearch node, so the test stack always has it; the
// archive tests read WACZ with the field's own tools (pywb, py-wacz, warcio: profile test)
const profiles = new Set(['search', 'test']);

try {
  await setup({ profiles });
  await ensureChromium();
} catch (err) {
  console.error(`npm test: setup failed: ${err.message}`);
  process.exit(1);
}

// unless the caller chose reporters, also write JSON results to print one plain closing line
const results = ROOT + '.stack/test/vitest-results.json';
const reporters = rest.some((a) => a.startsWith('--reporter')) ? [] : ['--reporter=default', '--reporter=json', `--outputFile.json=${results}`];
rmSync(results, { force: true });
say(`vitest run ${rest.join(' ')} (node ${process.version})`.replace(/ +\(/, ' ('));
const child = spawn(process.execPath, [ROOT + 'node_modules/vitest/vitest.mjs', 'run', ...reporters, ...rest], { cwd: ROOT, stdio: 'inherit' });
for (const sig of ['SIGINT', 'SIGTERM']) process.on(sig, () => child.kill(sig));
child.on('close', (code, signal) => {
  if (reporters.length && existsSync(results)) {
    const r = JSON.parse(readFileSync(results, 'utf8'));
    const skipped = (r.numPendingTests ?? 0) + (r.numTodoTests ?? 0);
    console.log(`${r.numPassedTests} passed, ${r.numFailedTests} failed${skipped ? `, ${skipped} skipped` : ''}`);
  }
  process.exit(code ?? (signal ? 1 : 0));
});
