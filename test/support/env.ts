// Tests read the same .env / .env.local as every script (the later wins; a variable already in
// the real environment wins over both, as with node --env-file). .env.example comes first, so a
// checkout without .env still runs.
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parseEnv } from 'node:util';

export const ROOT = fileURLToPath(new URL('../../', import.meta.url));

let loaded = false;
export function loadProjectEnv(): void {
  if (loaded) return;
  loaded = true;
  // process.loadEnvFile never overwrites, so loading the files in order would let the FIRST win.
  const merged: Record<string, string> = {};
  for (const f of ['.env.example', '.env', '.env.local']) {
    const p = ROOT + f;
    if (existsSync(p)) Object.assign(merged, parseEnv(readFileSync(p, 'utf8')));
  }
  for (const [k, v] of Object.entries(merged)) if (process.env[k] === undefined) process.env[k] = v;
}
