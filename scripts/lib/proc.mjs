// Process bookkeeping for the local stack: detached children logging to .stack/logs/<name>.log,
// pid files in .stack/pids/<name>.json, port checks and bounded waits.
import { spawn } from 'node:child_process';
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, rmSync, statSync, writeFileSync, readSync } from 'node:fs';
import net from 'node:net';
import { STACK_DIR } from './env.mjs';

export const LOG_DIR = STACK_DIR + 'logs/';
export const PID_DIR = STACK_DIR + 'pids/';

export class StackError extends Error {}

export function logPath(name) {
  return LOG_DIR + name + '.log';
}

export function rel(p) {
  return p.startsWith(STACK_DIR) ? '.stack/' + p.slice(STACK_DIR.length) : p;
}

export function sleep(ms) {
  return new Promise((r) => setTimeout(r, ms));
}

export function alive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return err.code === 'EPERM';
  }
}

function cmdline(pid) {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean);
  } catch {
    return null;
  }
}

/** The recorded process of a service, if it is still that process (pid reuse is checked by command). */
export function readPid(name) {
  const file = PID_DIR + name + '.json';
  if (!existsSync(file)) return null;
  let rec;
  try {
    rec = JSON.parse(readFileSync(file, 'utf8'));
  } catch {
    return { stale: true, file };
  }
  const cl = cmdline(rec.pid);
  const same = alive(rec.pid) && (!cl || cl.some((a) => a.includes(rec.match)));
  return { ...rec, file, running: same, stale: !same };
}

export function writePid(name, pid, match) {
  mkdirSync(PID_DIR, { recursive: true });
  writeFileSync(PID_DIR + name + '.json', JSON.stringify({ pid, match, started: new Date().toISOString() }) + '\n');
}

export function removePid(name) {
  rmSync(PID_DIR + name + '.json', { force: true });
}

/** Starts `command args` detached (it outlives this script), output appended to its log file. */
export function startDetached(name, command, args, opts = {}) {
  mkdirSync(LOG_DIR, { recursive: true });
  const log = logPath(name);
  const fd = openSync(log, 'a');
  writeFileSync(fd, `\n--- ${new Date().toISOString()} stack:up: ${[command, ...args].join(' ')}\n`);
  const logStart = statSync(log).size;
  let child;
  try {
    child = spawn(command, args, { cwd: opts.cwd, env: opts.env ?? process.env, detached: true, stdio: ['ignore', fd, fd] });
  } finally {
    closeSync(fd);
  }
  let exited = null;
  child.on('exit', (code, signal) => {
    exited = { code, signal };
  });
  child.on('error', (err) => {
    exited = { code: null, signal: null, error: err };
  });
  child.unref();
  return { child, log, logStart, exitStatus: () => exited };
}

/** The log lines written since `from` (bytes), at most `lines` of them. */
export function logTail(file, from = 0, lines = 15) {
  if (!existsSync(file)) return '';
  const size = statSync(file).size;
  const start = Math.max(from, size - 64 * 1024);
  const buf = Buffer.alloc(size - start);
  const fd = openSync(file, 'r');
  try {
    readSync(fd, buf, 0, buf.length, start);
  } finally {
    closeSync(fd);
  }
  return buf
    .toString('utf8')
    .trimEnd()
    .split('\n')
    .slice(-lines)
    .map((l) => '    ' + l)
    .join('\n');
}

/** True when 127.0.0.1:port can be bound (nobody listens there). */
export function portFree(port, host = '127.0.0.1') {
  return new Promise((resolve) => {
    const srv = net.createServer();
    srv.once('error', () => resolve(false));
    srv.listen({ port, host, exclusive: true }, () => srv.close(() => resolve(true)));
  });
}

/**
 * Polls `check` (resolving truthy when healthy) until it passes, the process exits, or the
 * deadline passes. Returns null on success, or a reason string.
 */
export async function waitHealthy(check, { timeoutMs, exitStatus, intervalMs = 300 }) {
  const deadline = Date.now() + timeoutMs;
  let last = '';
  for (;;) {
    const ex = exitStatus?.();
    if (ex)
      return ex.error
        ? `could not be started (${ex.error.message})`
        : `exited (code ${ex.code}${ex.signal ? `, signal ${ex.signal}` : ''}) before it became healthy`;
    try {
      const r = await check();
      if (r === true) return null;
      if (typeof r === 'string') last = r;
    } catch (err) {
      last = err.message;
    }
    if (Date.now() > deadline) return `did not become healthy within ${Math.round(timeoutMs / 1000)} s${last ? ` (last check: ${last})` : ''}`;
    await sleep(intervalMs);
  }
}

/** SIGTERM (or `signal`), then SIGKILL after graceMs. Resolves when the process is gone. */
export async function stopPid(pid, { signal = 'SIGTERM', graceMs = 15000, group = true } = {}) {
  const send = (sig) => {
    try {
      if (group) process.kill(-pid, sig);
      else process.kill(pid, sig);
    } catch {
      try {
        process.kill(pid, sig);
      } catch {
        /* gone */
      }
    }
  };
  send(signal);
  const deadline = Date.now() + graceMs;
  while (alive(pid) && Date.now() < deadline) await sleep(100);
  if (alive(pid)) {
    send('SIGKILL');
    const d2 = Date.now() + 5000;
    while (alive(pid) && Date.now() < d2) await sleep(100);
    return 'killed';
  }
  return 'stopped';
}
