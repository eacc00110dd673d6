// The Node every process runs on. package.json `engines` says which versions will do; when the
// machine's node is older (Debian's 20 on these machines), the one pinned in tools.json is brought
// into .tools/node from the npm registry (`npm pack node-<platform>-<arch>@<version>`: the package
// holds bin/node) and `npm start`, `npm test` and `.ci/run` re-run themselves with it. This file
// must itself run on the old node: plain JavaScript, nothing from node_modules.
import { spawn, execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, renameSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import { ROOT, TOOLS_DIR } from './env.mjs';

export const NODE_DIR = TOOLS_DIR + 'node/';
export const PINNED_NODE = NODE_DIR + 'bin/node';

export class NodeSetupError extends Error {}

/** The pin from tools.json: { version, package } with the package named for this platform. */
export function nodePin() {
  const pin = JSON.parse(readFileSync(ROOT + 'tools.json', 'utf8')).tools.node;
  if (!pin?.version || !pin.package) throw new NodeSetupError('tools.json has no node pin (tools.node.version, tools.node.package)');
  return { ...pin, package: pin.package.replace('{platform}', process.platform).replace('{arch}', process.arch) };
}

/** The lowest version package.json `engines.node` accepts (a ">=X.Y[.Z]" range). */
export function enginesMinimum() {
  const range = JSON.parse(readFileSync(ROOT + 'package.json', 'utf8')).engines?.node ?? '';
  const m = /^>=\s*(\d+)(?:\.(\d+))?(?:\.(\d+))?$/.exec(range.trim());
  if (!m) throw new NodeSetupError(`package.json engines.node must be ">=X.Y" (got ${JSON.stringify(range)})`);
  return m.slice(1).map((n) => Number(n ?? 0));
}

/** True when version "vA.B.C" or "A.B.C" is at least `min` ([A, B, C]). */
export function atLeast(version, min) {
  const v = version.replace(/^v/, '').split('.').map(Number);
  for (let i = 0; i < 3; i++) if ((v[i] ?? 0) !== min[i]) return (v[i] ?? 0) > min[i];
  return true;
}

function versionOf(bin) {
  try {
    return execFileSync(bin, ['--version'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  } catch {
    return null;
  }
}

/** True when both paths name one file: process.execPath is resolved, .tools may be a symlink
 * (a git worktree sharing the main checkout's tools), and a plain compare re-ran forever. */
function sameFile(a, b) {
  try {
    return realpathSync(a) === realpathSync(b);
  } catch {
    return a === b;
  }
}

const isPinned = (path) => sameFile(path, PINNED_NODE);

/** Brings the pinned node into .tools/node unless it is there already. Returns its path. */
export async function ensurePinnedNode(say = console.log) {
  const pin = nodePin();
  const running = isPinned(process.execPath) ? process.version : versionOf(PINNED_NODE);
  if (running === `v${pin.version}`) return PINNED_NODE;
  const spec = `${pin.package}@${pin.version}`;
  const tmp = mkdtempSync(join(tmpdir(), 'capture-ledger-node-'));
  try {
    say(`node: fetching ${spec} from the npm registry (53 MB)`);
    const started = Date.now();
    await npmPack(spec, tmp, () => say(`node: still downloading ${spec} (${Math.round((Date.now() - started) / 1000)}s)`));
    const tgz = readdirSync(tmp).find((f) => f.endsWith('.tgz'));
    if (!tgz) throw new NodeSetupError(`node: npm pack ${spec} wrote no tarball`);
    say(`node: extracting ${tgz}`);
    execFileSync('tar', ['-xzf', join(tmp, tgz), '-C', tmp]);
    const got = versionOf(join(tmp, 'package/bin/node'));
    if (got !== `v${pin.version}`) throw new NodeSetupError(`node: ${spec} holds no runnable bin/node (it says ${got ?? 'nothing'})`);
    mkdirSync(TOOLS_DIR, { recursive: true });
    rmSync(NODE_DIR, { recursive: true, force: true });
    renameSync(join(tmp, 'package'), NODE_DIR);
    say(`node: ${got} in .tools/node/bin/node (${Math.round((Date.now() - started) / 1000)}s)`);
    return PINNED_NODE;
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}

function npmPack(spec, dir, tick) {
  return new Promise((resolve, reject) => {
    // npm logs each fetch at loglevel http (shown: with the ticker, that is the progress) and
    // lists the tarball's 2800 files as notices (not shown)
    const child = spawn('npm', ['pack', spec, '--pack-destination', dir, '--loglevel', 'http', '--no-fund', '--no-audit'], {
      cwd: dir,
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let errors = '';
    child.stderr.on('data', (d) => {
      for (const line of d.toString().split('\n')) {
        if (/^npm http/.test(line)) console.log(`  ${line}`);
        else if (/ERR|error/i.test(line)) errors += line + '\n';
      }
    });
    const timer = setInterval(tick, 5000);
    child.on('error', (err) => {
      clearInterval(timer);
      reject(new NodeSetupError(`node: could not run npm pack ${spec} (${err.message})`));
    });
    child.on('close', (code) => {
      clearInterval(timer);
      if (code === 0) resolve();
      else reject(new NodeSetupError(`node: \`npm pack ${spec}\` failed (exit ${code})\n${errors.trim()}`));
    });
  });
}

/**
 * The node to run everything with: the pinned one when it is in .tools/node (as scripts/node
 * decides too), else this one when package.json `engines` accepts it, else the pin, brought now.
 */
export async function nodeForProject(say = console.log) {
  if (isPinned(process.execPath) || existsSync(PINNED_NODE)) return ensurePinnedNode(say);
  if (atLeast(process.version, enginesMinimum())) return process.execPath;
  say(`node: the machine's node is ${process.version}; package.json engines asks for ${JSON.parse(readFileSync(ROOT + 'package.json', 'utf8')).engines.node}`);
  return ensurePinnedNode(say);
}

/** process.env with `nodePath`'s directory first on PATH, so npm, npx and scripts/node use it. */
export function envWithNode(nodePath, env = process.env) {
  return { ...env, PATH: dirname(nodePath) + delimiter + (env.PATH ?? '') };
}

/**
 * Called first by `npm start` and `npm test`: on an old node, bring the pinned one and run this
 * same script again with it (this process waits and passes its exit code on). On a good node,
 * put it first on PATH for the children and return.
 */
export async function reexecOnProjectNode(say = console.log) {
  let node;
  try {
    node = await nodeForProject(say);
  } catch (err) {
    console.error(`setup failed: ${err.message}`);
    process.exit(1);
  }
  process.env.PATH = envWithNode(node).PATH;
  if (sameFile(node, process.execPath)) return;
  say(
    `node: running ${process.argv
      .slice(1)
      .map((a) => a.replace(ROOT, ''))
      .join(' ')} again on ${node.replace(ROOT, '')}`,
  );
  const child = spawn(node, [...process.execArgv, ...process.argv.slice(1)], { stdio: 'inherit', env: process.env });
  for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.on(sig, () => child.kill(sig));
  const code = await new Promise((resolve) => child.on('close', (c, signal) => resolve(c ?? (signal ? 1 : 0))));
  process.exit(code);
}

/**
 * How `npm start` runs an app without an npm process in between: package.json's script for it,
 * which must be `scripts/node <node arguments>`, as [node, arguments].
 */
export function scriptCommand(name) {
  const script = JSON.parse(readFileSync(ROOT + 'package.json', 'utf8')).scripts?.[name];
  const words = script?.trim().split(/\s+/) ?? [];
  if (words[0] !== 'scripts/node' || words.some((w) => /["'$`|&;<>]/.test(w))) {
    throw new NodeSetupError(`package.json script ${name} must be "scripts/node <plain arguments>" (got ${JSON.stringify(script)})`);
  }
  return [process.execPath, words.slice(1)];
}
