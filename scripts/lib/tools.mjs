// Where each server binary comes from: a binary of that name on PATH wins, otherwise the one
// `npm run tools` built into .tools/ from the pins in tools.json.
import { accessSync, constants, existsSync, readdirSync, readFileSync, realpathSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { ROOT, TOOLS_DIR } from './env.mjs';

export const TOOLS_BIN = TOOLS_DIR + 'bin/';
export const OPENSEARCH_DIR = TOOLS_DIR + 'opensearch/';

export function readPins() {
  return JSON.parse(readFileSync(ROOT + 'tools.json', 'utf8')).tools;
}

function executable(p) {
  try {
    accessSync(p, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** The first executable `name` on PATH, skipping .tools/bin itself (so "PATH wins" means someone else's). */
export function onPath(name) {
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    if (!dir || join(dir) === join(TOOLS_BIN)) continue;
    const p = join(dir, name);
    if (executable(p)) return p;
  }
  return null;
}

/** { path, source } for a Go-built tool, or null when neither PATH nor .tools/bin has it. */
export function resolveBinary(name) {
  const p = onPath(name);
  if (p) return { path: p, source: 'PATH' };
  const built = TOOLS_BIN + name;
  if (executable(built)) return { path: built, source: '.tools' };
  return null;
}

/** Debian's postgresql package: postgres on PATH wins, else the newest /usr/lib/postgresql/N/bin. */
export function postgresBinDir() {
  // a symlink on PATH (e.g. /usr/local/bin/postgres) stands for its real bin dir, with psql beside it
  const p = onPath('postgres');
  if (p) {
    const real = realpathSync(p);
    return real.slice(0, real.lastIndexOf('/'));
  }
  const base = '/usr/lib/postgresql';
  if (!existsSync(base)) return null;
  const versions = readdirSync(base)
    .filter((v) => /^\d+$/.test(v) && executable(`${base}/${v}/bin/postgres`))
    .sort((a, b) => Number(b) - Number(a));
  return versions.length ? `${base}/${versions[0]}/bin` : null;
}

/** The java command line of the OpenSearch launcher built by `npm run tools -- --profile search`. */
export function opensearchCommand() {
  const java = process.env.JAVA_HOME ? join(process.env.JAVA_HOME, 'bin/java') : onPath('java');
  const stamp = OPENSEARCH_DIR + 'stamp.json';
  if (!java || !existsSync(stamp)) return null;
  return {
    path: java,
    source: '.tools',
    args: ['-cp', `${OPENSEARCH_DIR}classes${delimiter}${OPENSEARCH_DIR}lib/*`],
    main: 'capture.ledger.OpenSearchLauncher',
  };
}
