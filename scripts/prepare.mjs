// node scripts/prepare.mjs: what .ci/run needs before lint and typecheck on a fresh machine —
// Node 24 (brought into .tools/node when the machine's is older) and node_modules (npm ci when
// missing or out of date). `npm start` and `npm test` do the same themselves.
import { reexecOnProjectNode } from './lib/node.mjs';
import { ensureNodeModules, say } from './lib/setup.mjs';

await reexecOnProjectNode(say);
try {
  await ensureNodeModules();
} catch (err) {
  console.error(`prepare: ${err.message}`);
  process.exit(1);
}
say(`node ${process.version} (${process.execPath}), node_modules current`);
