// Tests read the same .env / .env.local as every script (the later wins).
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

export const ROOT = fileURLToPath(new URL('../../', import.meta.url));

let loaded = false;
export function loadProjectEnv(): void {
  if (loaded) return;
  loaded = true;
  for (const f of ['.env.example', '.env', '.env.local']) {
    const p = ROOT + f;
    if (existsSync(p)) process.loadEnvFile(p);
  }
}
