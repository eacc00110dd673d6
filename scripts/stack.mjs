// npm run stack:up [-- --profile search] | stack:down | stack:status
//
// Runs the real services on this machine (no Docker): each one detached, logging to
// .stack/logs/<service>.log, its pid in .stack/pids/<service>.json. `up` waits until each service
// really answers (bounded), `down` stops only the processes `up` recorded.
import { SERVICES, PROFILES, serviceSpec } from './lib/services.mjs';
import { ensureLocalSecrets, loadEnv } from './lib/env.mjs';
import { fgaMigrate } from './lib/fga-migrate.mjs';
import { StackError, logPath, logTail, portFree, readPid, rel, removePid, startDetached, stopPid, waitHealthy, writePid } from './lib/proc.mjs';

const STOP_SIGNAL = { postgres: 'SIGINT' };

export function parseProfiles(argv) {
  const profiles = new Set();
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    let v = null;
    if (a === '--profile') v = argv[++i];
    else if (a.startsWith('--profile=')) v = a.slice('--profile='.length);
    else continue;
    for (const p of String(v ?? '')
      .split(',')
      .filter(Boolean)) {
      if (!PROFILES.includes(p)) throw new StackError(`unknown profile ${JSON.stringify(p)} (known: ${PROFILES.join(', ')})`);
      profiles.add(p);
    }
  }
  return profiles;
}

const t0 = Date.now();
const say = (msg) => console.log(`[stack ${((Date.now() - t0) / 1000).toFixed(1).padStart(5)}s] ${msg}`);

function describeCommand(cmd, args) {
  return [cmd, ...args]
    .map((a) => (/\s/.test(a) ? JSON.stringify(a) : a))
    .join(' ')
    .replace(/postgres:\/\/[^@\s]*@/g, 'postgres://***@');
}

/** The post-start step of a service that was already running (idempotent: roles, bucket ...). */
async function afterHealthyOf(name, spec) {
  try {
    await spec.afterHealthy?.(say);
  } catch (err) {
    throw new StackError(`${name}: ${err.message}. Read ${rel(logPath(name))}`);
  }
}

/** Starts one service unless it is up; true when this run started it (a restart is not counted). */
async function upOne(name) {
  const spec = serviceSpec(name);
  const rec = readPid(name);
  const stale = rec?.running ? spec.staleConfig?.(rec) : null;
  if (stale) {
    if (!spec.tool) throw new StackError(`${name}: ${stale}, but it cannot be restarted: command not found: ${spec.missing}`);
    say(`${name}: ${stale}; restarting it (pid ${rec.pid})`);
    await stopPid(rec.pid, { signal: STOP_SIGNAL[name] ?? 'SIGTERM', graceMs: 15000 });
    removePid(name);
    await startOne(name, spec);
    return false;
  }
  if (rec?.running) {
    const h = await spec.health().catch((e) => e.message);
    if (h === true) {
      await afterHealthyOf(name, spec);
      say(`${name}: already up (pid ${rec.pid}) at ${spec.url}`);
      return false;
    }
    say(`${name}: running (pid ${rec.pid}) but not healthy yet; waiting`);
    const reason = await waitHealthy(spec.health, { timeoutMs: spec.timeoutMs });
    if (reason)
      throw new StackError(
        `${name}: the running process (pid ${rec.pid}, started by stack:up) ${reason}. Read ${rel(logPath(name))}, or run \`npm run stack:down\` and try again.\n${logTail(logPath(name))}`,
      );
    await afterHealthyOf(name, spec);
    say(`${name}: up (pid ${rec.pid}) at ${spec.url}`);
    return false;
  }
  if (rec?.stale) removePid(name);
  await startOne(name, spec);
  return true;
}

async function startOne(name, spec) {
  if (!spec.tool) throw new StackError(`${name}: command not found: ${spec.missing}`);
  for (const { setting, port } of spec.ports) {
    if (!(await portFree(port))) {
      throw new StackError(
        `${name}: port ${port} on 127.0.0.1 (${setting}) is already in use by a process stack:up did not start; stop it or change the port in .env. Nothing was started for ${name}; log: ${rel(logPath(name))}`,
      );
    }
  }
  await spec.prepare?.(say);
  if (name === 'openfga') {
    say('openfga: fga:migrate (openfga migrate against CAPTURE_LEDGER_FGA_DATABASE_URL)');
    await fgaMigrate();
  }
  const [cmd, args, env] = spec.command();
  say(`${name}: starting (${spec.tool.source === 'PATH' ? 'from PATH: ' : ''}${spec.tool.path})`);
  const st = startDetached(name, cmd, args, { env });
  writePid(name, st.child.pid, spec.match);
  const reason = await waitHealthy(spec.health, { timeoutMs: spec.timeoutMs, exitStatus: st.exitStatus });
  if (reason) {
    const tail = logTail(st.log, st.logStart);
    await stopPid(st.child.pid, { signal: STOP_SIGNAL[name], graceMs: 5000 });
    removePid(name);
    throw new StackError(`${name}: ${reason}.\n  command: ${describeCommand(cmd, args)}\n  log: ${rel(st.log)}\n${tail}`);
  }
  if (spec.realPid) writePid(name, spec.realPid(), spec.match);
  try {
    await spec.afterHealthy?.(say);
  } catch (err) {
    const rec = readPid(name);
    if (rec?.running) await stopPid(rec.pid, { signal: STOP_SIGNAL[name], graceMs: 5000 });
    removePid(name);
    throw new StackError(`${name}: ${err.message}.\n  log: ${rel(st.log)}\n${logTail(st.log, st.logStart)}`);
  }
  say(`${name}: up (pid ${readPid(name).pid}) at ${spec.url}`);
}

/** Service names given on the command line (`up postgres temporal`), validated. */
export function parseNames(argv) {
  const names = [];
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === '--profile') i++;
    else if (!argv[i].startsWith('--')) {
      if (!SERVICES.some((s) => s.name === argv[i]))
        throw new StackError(`unknown service ${JSON.stringify(argv[i])} (known: ${SERVICES.map((s) => s.name).join(', ')})`);
      names.push(argv[i]);
    }
  }
  return names;
}

export async function up(profiles, only = []) {
  // the secrets the stack is given (the role's password, the S3 keys) are generated on a fresh clone
  ensureLocalSecrets(say);
  loadEnv();
  const wanted = SERVICES.filter((s) => (only.length ? only.includes(s.name) : !s.profile || profiles.has(s.profile)));
  // every command first: a missing tool stops stack:up before anything was started
  const missing = missingTools(wanted);
  if (missing.length) throw new StackError(`nothing was started.\n  ${missing.join('\n  ')}`);
  // and every port of a service that is not running yet must be free
  const taken = await takenPorts(wanted);
  if (taken.length) throw new StackError(`nothing was started.\n  ${taken.join('\n  ')}`);
  await startAll(wanted);
  say(`stack is up: ${wanted.map((s) => s.name).join(', ')} (logs in .stack/logs, \`npm run stack:status\`)`);
}

/** The services not running whose command is not installed, each with how to get it. */
function missingTools(wanted) {
  const missing = [];
  for (const { name } of wanted) {
    const spec = serviceSpec(name);
    if (!spec.tool && !readPid(name)?.running) missing.push(`${name}: command not found: ${spec.missing}`);
  }
  return missing;
}

/** The ports a service not running yet needs and some other process holds. */
async function takenPorts(wanted) {
  const taken = [];
  for (const { name } of wanted) {
    if (readPid(name)?.running) continue;
    for (const { setting, port } of serviceSpec(name).ports) {
      if (!(await portFree(port)))
        taken.push(
          `${name}: port ${port} on 127.0.0.1 (${setting}) is already in use by a process stack:up did not start; stop it or change the port in .env (log: ${rel(logPath(name))})`,
        );
    }
  }
  return taken;
}

/** Each service in order; when one fails, what this run started is stopped again. */
async function startAll(wanted) {
  const started = [];
  try {
    for (const { name } of wanted) {
      if (await upOne(name)) started.push(name);
    }
  } catch (err) {
    if (started.length) {
      say(`stopping what this run started (${started.join(', ')}) so no partial stack is left behind`);
      for (const name of started.reverse()) await downOne(name);
    }
    throw err;
  }
}

async function downOne(name) {
  const rec = readPid(name);
  if (!rec) return;
  if (rec.running) {
    const how = await stopPid(rec.pid, { signal: STOP_SIGNAL[name] ?? 'SIGTERM', graceMs: name === 'postgres' ? 30000 : 15000 });
    say(`${name}: ${how} (pid ${rec.pid})`);
  } else {
    say(`${name}: was not running (stale pid file removed)`);
  }
  removePid(name);
}

export async function down(only = []) {
  for (const { name } of [...SERVICES].reverse()) if (!only.length || only.includes(name)) await downOne(name);
  say(only.length ? `stopped: ${only.join(', ')}` : 'stack is down');
}

export async function status() {
  loadEnv();
  let bad = false;
  for (const { name, profile, what } of SERVICES) {
    const rec = readPid(name);
    let spec;
    try {
      spec = serviceSpec(name);
    } catch (err) {
      console.log(`${name.padEnd(11)} ERROR      ${err.message}`);
      bad = true;
      continue;
    }
    let state;
    if (rec?.running) {
      const h = await spec.health().catch((e) => e.message);
      state = h === true ? 'up' : `unhealthy: ${h}`;
      if (h !== true) bad = true;
    } else {
      state = profile ? `down (profile ${profile})` : 'down';
      if (!profile) bad = true;
    }
    const pid = rec?.running ? `pid ${rec.pid}` : '';
    console.log(`${name.padEnd(11)} ${state.padEnd(22)} ${pid.padEnd(11)} ${spec.url.padEnd(50)} ${rel(logPath(name))}  # ${what}`);
    if (name === 'postgres' && state === 'up') console.log(outboxLine(spec));
  }
  return bad ? 1 : 0;
}

/** The outbox under the postgres line: queued tuples and the dead letter (fga_outbox.dead_at). */
function outboxLine(spec) {
  try {
    const { queued, dead } = spec.outboxCounts();
    const hint = dead > 0 ? '  # refused by OpenFGA: fix the cause, then npm run fga:drain -- --retry-dead' : '';
    return `${'outbox'.padEnd(11)} queued ${queued}, dead letter ${dead}${hint}`;
  } catch (err) {
    const why = String(err.stderr || err.message)
      .trim()
      .split('\n')[0];
    return `${'outbox'.padEnd(11)} not readable (${why}; npm run db:migrate?)`;
  }
}

async function main() {
  const [cmd, ...rest] = process.argv.slice(2);
  try {
    if (cmd === 'up') await up(parseProfiles(rest), parseNames(rest));
    else if (cmd === 'down') await down(parseNames(rest));
    else if (cmd === 'status') process.exitCode = await status();
    else {
      console.error('usage: node scripts/stack.mjs up [--profile search] [service...] | down [service...] | status');
      process.exitCode = 2;
    }
  } catch (err) {
    console.error(`stack:${cmd} failed: ${err instanceof StackError ? err.message : (err.stack ?? err.message)}`);
    process.exitCode = 1;
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await main();
