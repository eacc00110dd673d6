// The API as `npm run api` starts it (src/api/main.ts in a process of its own), on a test's
// database and OpenFGA store: for what only the process shows, its startup log and the clients it
// builds from the environment.
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { testApiEnv, type TestIdentity } from './api.ts';
import { eventually } from './crawls.ts';
import type { TestDatabase } from './db.ts';
import { ROOT } from './env.ts';
import type { TestStore } from './fga.ts';
import { freePort } from './private.ts';

export interface LogLine {
  level: number;
  msg: string;
}

export interface ApiProcess {
  url: string;
  /** its log lines up to its listening line */
  lines: LogLine[];
}

const running: ChildProcess[] = [];

/** The environment a process of the project runs with on `parts`, `identity` and `extra` (testApiEnv) over the test's own. */
export function processEnv(parts: { tdb: TestDatabase; store: TestStore }, identity: TestIdentity, extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  return { ...process.env, ...testApiEnv({ ...parts, identity, env: extra }) };
}

/** Starts src/api/main.ts on a free port and waits for its listening line. stopApiProcesses ends it. */
export async function startApiProcess(
  parts: { tdb: TestDatabase; store: TestStore },
  identity: TestIdentity,
  extra: Record<string, string> = {},
): Promise<ApiProcess> {
  const port = await freePort();
  const env = processEnv(parts, identity, { ...extra, CAPTURE_LEDGER_API_PORT: String(port) });
  const child = spawn(process.execPath, ['src/api/main.ts'], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  running.push(child);
  let out = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  const url = `http://127.0.0.1:${port}`;
  const lines = await eventually(
    async () => {
      if (child.exitCode !== null) throw new Error(`the API exited ${child.exitCode}: ${out}`);
      const parsed = out
        .split('\n')
        .filter((l) => l.startsWith('{'))
        .map((l) => JSON.parse(l) as LogLine);
      const listening = parsed.findIndex((l) => l.msg === `capture-ledger api on ${url}`);
      return listening === -1 ? undefined : parsed.slice(0, listening + 1);
    },
    60_000,
    `the API's listening line (it said: ${out})`,
  );
  return { url, lines };
}

/** Ends every API process started (SIGTERM: it closes as a deploy closes it) and waits for each. */
export async function stopApiProcesses(): Promise<void> {
  for (const child of running.splice(0)) {
    if (child.exitCode !== null || child.signalCode !== null) continue;
    child.kill('SIGTERM');
    await once(child, 'exit');
  }
}
