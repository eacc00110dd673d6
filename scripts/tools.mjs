// npm run tools [-- --profile search] [name...]
//
// Builds the pinned servers (tools.json, the one file with versions) into .tools/:
//   kind "go":         go mod download -json MODULE@VERSION, then go build inside that module's
//                      directory → .tools/bin/NAME (module cache and build cache under .tools/go)
//   kind "node":       the pinned Node, only when the machine's is older than package.json engines
//                      (scripts/lib/node.mjs) → .tools/node/bin/node
//   kind "maven-java": Maven resolves the artifacts and their dependencies from Maven Central into
//                      .tools/<name>/lib (local repository .tools/m2), javac compiles the launcher
//                      into .tools/<name>/classes
//   kind "pypi":       the packages, pinned, from PyPI into a venv of the machine's python3 →
//                      .tools/<name>/bin/
// A binary of the same name on PATH wins (nothing is built for it). Each build leaves a stamp; a
// tool whose stamp matches its pin is skipped, so a second run takes seconds.
import { spawn, execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { cpSync, existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { ROOT, TOOLS_DIR } from './lib/env.mjs';
import { PINNED_NODE, nodeForProject } from './lib/node.mjs';
import { TOOLS_BIN, onPath, readPins } from './lib/tools.mjs';

const GO_DIR = TOOLS_DIR + 'go/';
const STAMPS = TOOLS_DIR + 'stamps/';
const M2 = TOOLS_DIR + 'm2';
const MAVEN_DEPENDENCY_PLUGIN = '3.8.1';

const t0 = Date.now();
const elapsed = (since = t0) => {
  const s = Math.round((Date.now() - since) / 1000);
  return s >= 60 ? `${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}s` : `${s}s`;
};
const say = (msg) => console.log(`[tools ${elapsed().padStart(6)}] ${msg}`);

class ToolError extends Error {}

export function goEnv() {
  return {
    ...process.env,
    GOPATH: GO_DIR,
    GOMODCACHE: GO_DIR + 'pkg/mod',
    GOCACHE: GO_DIR + 'cache',
    GOFLAGS: '-modcacherw -buildvcs=false',
  };
}

function stampOf(name) {
  try {
    return JSON.parse(readFileSync(STAMPS + name + '.json', 'utf8'));
  } catch {
    return null;
  }
}
function writeStamp(name, pin, extra = {}) {
  mkdirSync(STAMPS, { recursive: true });
  writeFileSync(STAMPS + name + '.json', JSON.stringify({ pin, ...extra, built: new Date().toISOString() }, null, 2) + '\n');
}
// only what changes the build counts (editing a pin's "why" rebuilds nothing)
const buildKey = (pin) =>
  pin ? JSON.stringify(pin, ['kind', 'module', 'version', 'package', 'upgrade', 'artifacts', 'packages', 'launcher', 'pin', 'mavenDependencyPlugin']) : null;
const samePin = (a, b) => buildKey(a) === buildKey(b);

/** Runs a command, streaming nothing; every `everyMs` it reports progress via `tick(lines)`. */
function run(cmd, args, opts) {
  const { cwd, env, onLine, tick, everyMs = 10000, label } = opts;
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    let lines = 0;
    const eat = (buf, isErr) => {
      const s = buf.toString();
      if (isErr) err = (err + s).slice(-20000);
      else out = (out + s).slice(-20000);
      for (const l of s.split('\n')) {
        if (!l.trim()) continue;
        lines++;
        onLine?.(l, isErr);
      }
    };
    child.stdout.on('data', (b) => eat(b, false));
    child.stderr.on('data', (b) => eat(b, true));
    const timer = tick ? setInterval(() => tick(lines), everyMs) : null;
    child.on('error', (err) => {
      if (timer) clearInterval(timer);
      reject(new ToolError(`${label}: could not run ${cmd} (${err.message})`));
    });
    child.on('close', (code) => {
      if (timer) clearInterval(timer);
      if (code === 0) resolve(out + (opts.keepStderr ? err : ''));
      else {
        const tail = (err.trim() || out.trim())
          .split('\n')
          .filter((l) => !l.startsWith('go: downloading'))
          .slice(-25)
          .join('\n');
        reject(new ToolError(`${label}: \`${cmd} ${args.join(' ')}\` failed (exit ${code}) in ${cwd ?? ROOT}\n${tail}`));
      }
    });
  });
}

/** `go version -m` of a binary: { path, mod, version } of its main package, or null. */
function buildInfo(bin) {
  try {
    const out = execFileSync('go', ['version', '-m', bin], { encoding: 'utf8', env: goEnv(), stdio: ['ignore', 'pipe', 'ignore'] });
    const path = /^\s*path\s+(\S+)/m.exec(out)?.[1];
    const mod = /^\s*mod\s+(\S+)\s+(\S+)/m.exec(out);
    return { path, mod: mod?.[1], version: mod?.[2] };
  } catch {
    return null;
  }
}

async function buildGo(name, pin) {
  const bin = TOOLS_BIN + name;
  if (existsSync(bin) && alreadyBuilt(name, pin, bin)) return;
  if (!onPath('go')) throw new ToolError(`${name}: the go command is not on PATH (needed to build ${pin.module}@${pin.version})`);
  const started = Date.now();
  const { dir, env } = await moduleSource(name, pin, started);
  await compileGo(name, pin, { dir, env, bin, started });
  writeStamp(name, pin);
  say(`${name}: built .tools/bin/${name} in ${elapsed(started)}`);
}

/** True (and said) when `bin` is this pin's build: stamped so, or built before stamps existed from the same package. */
function alreadyBuilt(name, pin, bin) {
  if (samePin(stampOf(name)?.pin, pin)) {
    say(`${name}: up to date (${pin.module}@${pin.version})`);
    return true;
  }
  // built before stamps existed (or by hand with the same recipe): adopt it if it is that package
  const pkgPath = pin.module + pin.package.replace(/^\.(?=\/)/, '').replace(/^\.$/, '');
  const info = stampOf(name) ? null : buildInfo(bin);
  if (info && info.path === pkgPath && info.mod === pin.module && (info.version === pin.version || info.version === '(devel)')) {
    writeStamp(name, pin, { adopted: true });
    say(`${name}: up to date (${pin.module}@${pin.version}, existing build adopted)`);
    return true;
  }
  return false;
}

/** The module's source, downloaded: the module cache's copy, or a copy with `pin.upgrade` applied; and the env to build it with. */
async function moduleSource(name, pin, started) {
  say(`${name}: downloading ${pin.module}@${pin.version}`);
  const json = await run('go', ['mod', 'download', '-json', `${pin.module}@${pin.version}`], { env: goEnv(), label: name, cwd: TOOLS_DIR });
  const info = JSON.parse(json.slice(json.indexOf('{')));
  if (info.Error || !info.Dir) throw new ToolError(`${name}: go mod download ${pin.module}@${pin.version}: ${info.Error ?? 'no directory'}`);
  if (!pin.upgrade?.length) return { dir: info.Dir, env: goEnv() };
  // go.sum of the copy gains the entries of the upgraded versions as they are used
  const base = goEnv();
  const env = { ...base, GOFLAGS: base.GOFLAGS + ' -mod=mod' };
  // some dependency versions it names are not served: build a copy with those upgraded
  const dir = `${TOOLS_DIR}src/${name}@${pin.version}`;
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(TOOLS_DIR + 'src', { recursive: true });
  cpSync(info.Dir, dir, { recursive: true });
  execFileSync('chmod', ['-R', 'u+w', dir]);
  say(`${name}: upgrading ${pin.upgrade.join(', ')} in a copy of the module`);
  await run('go', ['get', ...pin.upgrade], { cwd: dir, env, label: name, tick: () => say(`${name}: still resolving (${elapsed(started)})`) });
  return { dir, env };
}

/** `go build` of the pinned package into `bin`, through a temporary file: a build cut short leaves no binary. */
async function compileGo(name, pin, { dir, env, bin, started }) {
  say(`${name}: listing packages of ${pin.package}`);
  let deps = 0;
  await run('go', ['list', '-deps', pin.package], {
    cwd: dir,
    env,
    label: name,
    onLine: (_l, isErr) => {
      if (!isErr) deps++;
    },
    tick: () => say(`${name}: still downloading dependencies (${elapsed(started)})`),
  });
  say(`${name}: compiling ${deps} packages (cached ones are skipped)`);
  mkdirSync(TOOLS_BIN, { recursive: true });
  const tmp = `${bin}.tmp-${process.pid}`;
  let compiled = 0;
  try {
    await run('go', ['build', '-v', '-o', tmp, pin.package], {
      cwd: dir,
      env,
      label: name,
      onLine: (l) => {
        if (!l.startsWith('go: ')) compiled++;
      },
      tick: () => say(`${name}: compiled ${compiled}/${deps} packages (${elapsed(started)})`),
    });
    renameSync(tmp, bin);
  } finally {
    rmSync(tmp, { force: true });
  }
}

function fileHash(p) {
  return createHash('sha256').update(readFileSync(p)).digest('hex').slice(0, 16);
}

function pomFor(name, pin) {
  const deps = pin.artifacts
    .map((a) => {
      const [g, art, v] = a.split(':');
      return `    <dependency><groupId>${g}</groupId><artifactId>${art}</artifactId><version>${v}</version></dependency>`;
    })
    .join('\n');
  return `<?xml version="1.0" encoding="UTF-8"?>
<!-- generated by scripts/tools.mjs from tools.json; do not edit -->
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>capture-ledger.tools</groupId>
  <artifactId>${name}</artifactId>
  <version>0</version>
  <packaging>pom</packaging>
  <dependencies>
${deps}
  </dependencies>
  <build>
    <plugins>
      <plugin>
        <groupId>org.apache.maven.plugins</groupId>
        <artifactId>maven-dependency-plugin</artifactId>
        <version>${MAVEN_DEPENDENCY_PLUGIN}</version>
      </plugin>
    </plugins>
  </build>
</project>
`;
}

async function buildMavenJava(name, pin) {
  const dir = TOOLS_DIR + name + '/';
  const launcher = ROOT + pin.launcher;
  const wantStamp = { pin, launcher: fileHash(launcher), mavenDependencyPlugin: MAVEN_DEPENDENCY_PLUGIN };
  const have = existsSync(dir + 'stamp.json') ? JSON.parse(readFileSync(dir + 'stamp.json', 'utf8')) : null;
  if (have && samePin(have.want, wantStamp)) {
    say(`${name}: up to date (${pin.artifacts.join(', ')})`);
    return;
  }
  for (const cmd of ['mvn', 'javac'])
    if (!onPath(cmd)) throw new ToolError(`${name}: the ${cmd} command is not on PATH (needed to build the ${name} launcher)`);
  const started = Date.now();
  mkdirSync(dir, { recursive: true });
  rmSync(dir + 'stamp.json', { force: true });
  writeFileSync(dir + 'pom.xml', pomFor(name, pin));
  say(`${name}: resolving ${pin.artifacts.length} artifacts and their dependencies from Maven Central`);
  rmSync(dir + 'lib', { recursive: true, force: true });
  let fetched = 0;
  await run(
    'mvn',
    [
      '-B',
      '-ntp',
      `-Dmaven.repo.local=${M2}`,
      '-f',
      dir + 'pom.xml',
      `org.apache.maven.plugins:maven-dependency-plugin:${MAVEN_DEPENDENCY_PLUGIN}:copy-dependencies`,
      `-DoutputDirectory=${dir}lib`,
      '-DincludeScope=runtime',
    ],
    {
      cwd: dir,
      label: name,
      onLine: (l) => {
        if (/Copying|Downloaded/.test(l)) fetched++;
      },
      tick: () => say(`${name}: maven still resolving (${fetched} artifacts so far, ${elapsed(started)})`),
    },
  );
  say(`${name}: compiling ${pin.launcher}`);
  rmSync(dir + 'classes', { recursive: true, force: true });
  await run('javac', ['--release', '17', '-nowarn', '-cp', `${dir}lib/*`, '-d', dir + 'classes', launcher], { label: name, cwd: dir });
  writeFileSync(dir + 'stamp.json', JSON.stringify({ want: wantStamp, built: new Date().toISOString() }, null, 2) + '\n');
  say(`${name}: built .tools/${name} in ${elapsed(started)}`);
}

async function buildPypi(name, pin) {
  const dir = TOOLS_DIR + name + '/';
  const have = existsSync(dir + 'stamp.json') ? JSON.parse(readFileSync(dir + 'stamp.json', 'utf8')) : null;
  if (have && samePin(have.pin, pin)) {
    say(`${name}: up to date (${pin.packages.join(', ')})`);
    return;
  }
  if (!onPath('python3')) throw new ToolError(`${name}: the python3 command is not on PATH (needed for ${pin.packages.join(', ')})`);
  const started = Date.now();
  rmSync(dir, { recursive: true, force: true });
  say(`${name}: a venv with ${pin.packages.join(', ')} from PyPI`);
  await run('python3', ['-m', 'venv', dir], { label: name, cwd: ROOT });
  await run(dir + 'bin/pip', ['install', '--disable-pip-version-check', '--no-input', '--progress-bar', 'off', ...pin.packages], {
    label: name,
    cwd: ROOT,
    tick: () => say(`${name}: pip still installing (${elapsed(started)})`),
  });
  writeFileSync(dir + 'stamp.json', JSON.stringify({ pin, built: new Date().toISOString() }, null, 2) + '\n');
  say(`${name}: installed .tools/${name} in ${elapsed(started)}`);
}

export async function tools({ profiles = new Set(), only = [] } = {}) {
  const pins = readPins();
  for (const name of only) if (!pins[name]) throw new ToolError(`unknown tool ${JSON.stringify(name)} (tools.json has ${Object.keys(pins).join(', ')})`);
  const wanted = Object.entries(pins).filter(([name, pin]) => (only.length ? only.includes(name) : !pin.profile || profiles.has(pin.profile)));
  mkdirSync(TOOLS_BIN, { recursive: true });
  for (const [name, pin] of wanted) {
    if (pin.kind === 'node') {
      const node = await nodeForProject(say);
      say(`node: ${node === PINNED_NODE ? `v${pin.version} in .tools/node` : `the machine's ${process.version}`}`);
    } else if (pin.kind === 'go') {
      const p = onPath(name);
      if (p) {
        say(`${name}: using ${p} from PATH (not building ${pin.module}@${pin.version})`);
        continue;
      }
      await buildGo(name, pin);
    } else if (pin.kind === 'maven-java') {
      await buildMavenJava(name, pin);
    } else if (pin.kind === 'pypi') {
      await buildPypi(name, pin);
    } else throw new ToolError(`${name}: unknown kind ${pin.kind} in tools.json`);
  }
  const skipped = Object.entries(pins).filter(([n]) => !wanted.some(([w]) => w === n));
  say(`done${skipped.length ? ` (not built: ${skipped.map(([n, p]) => `${n}${p.profile ? ` — profile ${p.profile}` : ''}`).join(', ')})` : ''}`);
}

async function main() {
  const argv = process.argv.slice(2);
  const profiles = new Set();
  const only = [];
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === '--profile') profiles.add(argv[++i]);
    else if (argv[i].startsWith('--profile=')) profiles.add(argv[i].slice(10));
    else if (!argv[i].startsWith('-')) only.push(argv[i]);
  }
  try {
    await tools({ profiles, only });
  } catch (err) {
    console.error(`tools failed: ${err instanceof ToolError ? err.message : err.stack}`);
    process.exitCode = 1;
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await main();
