#!/usr/bin/env node
// npm run check-env [-- --root <dir>]: keeps .env.example in step with what the code reads.
// Every CAPTURE_LEDGER_* name that appears in src/, scripts/ or bench/ (tests excluded) must be
// declared in .env.example, and every variable .env.example declares must appear in the code.
// Exits 1 naming each difference.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

// the ledger's variables, the capture flow's and the capture worker's
const PREFIXES = ['CAPTURE_LEDGER', 'CAPTURE_FLOW', 'CAPTURE_WORKER'].map((p) => p + '_');
// A name is a prefix and at least one more character; one ending in "_" is a prefix being
// assembled (`${PREFIX}S3_` + ...), not a variable.
const NAME = new RegExp(`\\b(?:${PREFIXES.join('|')})[A-Z0-9_]*[A-Z0-9]\\b`, 'g');
const SCANNED_DIRS = ['src', 'scripts', 'bench'];
const EXTENSIONS = /\.(?:ts|mts|cts|js|mjs|cjs)$/;
const SKIPPED = /\.test\.[cm]?[jt]s$/;

function* files(dir) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, entry.name);
    if (entry.isDirectory()) {
      if (entry.name !== 'node_modules') yield* files(p);
    } else if (EXTENSIONS.test(entry.name) && !SKIPPED.test(entry.name)) {
      yield p;
    }
  }
}

/** name → the files that mention it. */
export function namesInCode(root) {
  const found = new Map();
  const roots = SCANNED_DIRS.map((d) => join(root, d)).filter((d) => existsSync(d) && statSync(d).isDirectory());
  const topLevel = readdirSync(root)
    .filter((f) => EXTENSIONS.test(f) && !SKIPPED.test(f))
    .map((f) => join(root, f));
  for (const file of [...topLevel, ...roots.flatMap((d) => [...files(d)])]) {
    for (const m of readFileSync(file, 'utf8').matchAll(NAME)) {
      const where = found.get(m[0]) ?? new Set();
      where.add(relative(root, file));
      found.set(m[0], where);
    }
  }
  return found;
}

/** The variables .env.example declares (NAME=... lines; comments do not declare anything). */
export function namesDeclared(exampleText) {
  const names = new Set();
  for (const line of exampleText.split(/\r?\n/)) {
    const m = /^\s*(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*=/.exec(line);
    if (m && PREFIXES.some((p) => m[1].startsWith(p))) names.add(m[1]);
  }
  return names;
}

function main(argv) {
  const i = argv.indexOf('--root');
  const root = resolve(i >= 0 && argv[i + 1] ? argv[i + 1] : fileURLToPath(new URL('../', import.meta.url)));
  const examplePath = join(root, '.env.example');
  if (!existsSync(examplePath)) {
    console.error(`check-env: ${examplePath} does not exist`);
    return 1;
  }
  const declared = namesDeclared(readFileSync(examplePath, 'utf8'));
  const read = namesInCode(root);

  const undeclared = [...read.keys()].filter((n) => !declared.has(n)).sort();
  const unread = [...declared].filter((n) => !read.has(n)).sort();
  if (undeclared.length === 0 && unread.length === 0) {
    console.log(`check-env: .env.example declares exactly the ${declared.size} variables the code reads`);
    return 0;
  }
  for (const n of undeclared) console.error(`check-env: ${n} is read by the code (${[...read.get(n)].sort().join(', ')}) but not declared in .env.example`);
  for (const n of unread) console.error(`check-env: ${n} is declared in .env.example but the code never reads it`);
  return 1;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  process.exitCode = main(process.argv.slice(2));
}
