// A bench's helper script in a node process of its own (capture workers, simulated ones): started
// with this process's node and flags, ready once it prints a line holding "ready"; every stdout
// line kept, for what it prints as it stops.
import { spawn, type ChildProcess } from 'node:child_process';

export interface ReadyProcess {
  child: ChildProcess;
  /** stdout, line by line */
  lines: string[];
}

export async function spawnReady(script: string, args: readonly string[], what: string): Promise<ReadyProcess> {
  const child = spawn(process.execPath, [...process.execArgv, script, ...args], { stdio: ['ignore', 'pipe', 'inherit'] });
  const lines: string[] = [];
  await new Promise<void>((resolve, reject) => {
    let buf = '';
    child.stdout!.on('data', (d: Buffer) => {
      buf += d.toString();
      for (let i = buf.indexOf('\n'); i >= 0; i = buf.indexOf('\n')) {
        lines.push(buf.slice(0, i));
        buf = buf.slice(i + 1);
        if (lines.at(-1)!.includes('"ready"')) resolve();
      }
    });
    child.once('exit', (code) => reject(new Error(`${what} exited ${code} before it was ready`)));
  });
  return { child, lines };
}

/**
 * SIGTERM, and the process's exit (at once when it has exited already); with `killAfterMs`, a
 * process still running that long after is sent SIGKILL.
 */
export async function stopProcess(child: ChildProcess, killAfterMs?: number): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((r) => child.once('exit', r));
  child.kill('SIGTERM');
  if (killAfterMs === undefined) return void (await exited);
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([exited, new Promise((r) => (timer = setTimeout(r, killAfterMs)))]);
  clearTimeout(timer);
  if (child.exitCode === null && child.signalCode === null) {
    child.kill('SIGKILL');
    await exited;
  }
}
