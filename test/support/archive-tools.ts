// The field's own archive readers as the tests run them: py-wacz, warcio and pywb from PyPI in
// .tools/archive-tools (tools.json, profile test; npm test installs them).
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { createServer, type AddressInfo } from 'node:net';
import { promisify } from 'node:util';
import { ROOT } from './env.ts';

export const run = promisify(execFile);
export const TOOLS = `${ROOT}.tools/archive-tools/bin/`;

/** A free port on 127.0.0.1 for pywb's server. */
async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((r) => probe.listen(0, '127.0.0.1', r));
  const { port } = probe.address() as AddressInfo;
  await new Promise<void>((r) => probe.close(() => r()));
  return port;
}

/** pywb's `wayback` serving the collections under `cwd`, once it answers. */
export async function startWayback(cwd: string): Promise<{ origin: string; child: ChildProcess }> {
  const port = await freePort();
  const child = spawn(`${TOOLS}wayback`, ['-p', String(port), '-b', '127.0.0.1'], { cwd, stdio: ['ignore', 'ignore', 'pipe'] });
  let exited: string | null = null;
  child.on('exit', (code) => (exited = `wayback exited with ${code}`));
  const origin = `http://127.0.0.1:${port}`;
  // wait until it answers: each try is a request, and a dead process ends the wait at once
  for (;;) {
    if (exited !== null) throw new Error(exited);
    const up = await fetch(`${origin}/`).then(
      (r) => r.status,
      () => null,
    );
    if (up !== null) return { origin, child };
    await new Promise((r) => setTimeout(r, 100));
  }
}
