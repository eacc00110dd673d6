// The capture tier's coordination at scale, by simulation (issue 25): the real receiver, level and
// slice workflows and Temporal feed SIM_WORKERS simulated capture workers — one Temporal worker on
// the capture queue with that many activity slots, in a process of its own as capture workers are
// (support-sim-capture-workers.ts), whose capturePage waits CAPTURE_MS (the calibrated stand-in
// for Chromium, in this bench only), signals hostDone and answers as a capture would. A level of N
// pages on N/20 hosts is dispatched and timed until its report arrives. What is simulated: the
// browser, the page and the upload; what is real: every workflow task, timer, signal, activity and
// the report.
//
// Two Temporal servers, each a row: the stack's dev server (`stack`: SQLite in a file, what
// `npm start` runs), and a private one the bench starts from the same binary with its history in
// memory (`memory`): the coordination's own ceiling, without the file's writes.
//
//   node bench/coordination.ts [--pages N] [--temporal stack|memory]   (npm run bench: 2,000 and 20,000, both)
//   BENCH_TEMPORAL_PID=<pid>   the stack's Temporal server whose CPU is counted, when it is not
//                              the one in .stack/pids/temporal.json
//
// Printed per server and size: pages/s (the coordination's ceiling: the simulated workers have
// slots to spare); CPU ms per page of the coordination: this process (receiver, level and slice
// workflows) and the Temporal server; the simulated workers' CPU beside it (a real capture
// worker's, on its own machine); history events per page; and the bare floor: the same number of
// no-op activities through the same Temporal with no pacing, slicing or report (ratio =
// coordinated / bare time).
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { Client, Connection } from '@temporalio/client';
import { NativeConnection, Worker } from '@temporalio/worker';
import type { DispatchBody } from '../src/domain/contract.ts';
import { startFlow } from '../src/flow/server.ts';
import { memoryStore } from '../src/flow/store.ts';
import { temporalDevServerFlags } from '../scripts/lib/services.mjs';
import { dispatch } from '../test/support/flow-dispatch.ts';
import { freePort } from '../test/support/private.ts';
import { cpuSecondsOf } from '../test/support/processes.ts';
import { quietRuntime } from '../test/support/quiet-runtime.ts';
import { benchFlowOptions, benchLevel, benchTemporal } from './support-flow.ts';
import { load1Now } from './support-figures.ts';
import { spawnReady, stopProcess, type ReadyProcess } from './support-process.ts';

const SIM_WORKERS = 100;
const CAPTURE_MS = 50;
const PAGES_PER_HOST = 20;
const GOAL_PAGES_PER_S = 300;
const GOAL_CPU_MS_PER_PAGE = 2;

const SIM_SCRIPT = fileURLToPath(new URL('./support-sim-capture-workers.ts', import.meta.url));
const TEMPORAL_BIN = fileURLToPath(new URL('../.tools/bin/temporal', import.meta.url));

type ServerName = 'stack' | 'memory';

/** A Temporal server the bench measures against: where it listens and whose CPU it counts. */
interface TemporalServer {
  name: ServerName;
  address: string;
  namespace: string;
  pid: number | undefined;
  close(): Promise<void>;
}

/** The stack's server; its pid from BENCH_TEMPORAL_PID, else the stack's record of it. */
function stackTemporal(): TemporalServer {
  const given = Number(process.env.BENCH_TEMPORAL_PID);
  let pid: number | undefined = Number.isInteger(given) && given > 0 ? given : undefined;
  try {
    pid ??= (JSON.parse(readFileSync(new URL('../.stack/pids/temporal.json', import.meta.url), 'utf8')) as { pid: number }).pid;
  } catch {
    pid = undefined;
  }
  return { name: 'stack', ...benchTemporal(), pid, close: async () => {} };
}

/** A private dev server from the stack's binary, its history in memory, ready once its namespace answers. */
async function memoryTemporal(): Promise<TemporalServer> {
  const { namespace } = benchTemporal();
  const port = await freePort();
  const bin = existsSync(TEMPORAL_BIN) ? TEMPORAL_BIN : 'temporal';
  const args = ['server', 'start-dev', '--headless', '--ip', '127.0.0.1', '--port', String(port), '--log-level', 'warn', '--namespace', namespace];
  args.push(...temporalDevServerFlags());
  const child = spawn(bin, args, { stdio: 'ignore' });
  const address = `127.0.0.1:${port}`;
  const close = (): Promise<void> => stopProcess(child);
  for (const deadline = Date.now() + 60_000; ;) {
    if (child.exitCode !== null) throw new Error(`the private Temporal server exited ${child.exitCode} before it was ready`);
    try {
      const connection = await Connection.connect({ address, connectTimeout: 1000 });
      await connection.workflowService.describeNamespace({ namespace });
      await connection.close();
      return { name: 'memory', address, namespace, pid: child.pid, close };
    } catch (err) {
      if (Date.now() > deadline) {
        await close();
        throw new Error(`the private Temporal server at ${address} was not ready in 60 s: ${(err as Error).message}`);
      }
      await new Promise((r) => setTimeout(r, 250));
    }
  }
}

const ownCpu = (): number => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1e6;
};

const cpuOf = (pid: number | undefined): number => (pid === undefined ? 0 : (cpuSecondsOf(pid) ?? 0));

async function historyEvents(client: Client, levelId: string): Promise<number> {
  let events = 0;
  for await (const w of client.workflow.list({ query: `WorkflowId STARTS_WITH "${levelId}"` })) events += w.historyLength ?? 0;
  return events;
}

interface Measured {
  seconds: number;
  ownCpuS: number;
  temporalCpuS: number;
  /** the simulated capture workers' process, when they run in one */
  simCpuS: number;
}

async function measure(server: TemporalServer, fn: () => Promise<void>, simPid?: number): Promise<Measured> {
  const [c0, t0, s0, w0] = [ownCpu(), cpuOf(server.pid), cpuOf(simPid), Date.now()];
  await fn();
  return { seconds: (Date.now() - w0) / 1000, ownCpuS: ownCpu() - c0, temporalCpuS: cpuOf(server.pid) - t0, simCpuS: cpuOf(simPid) - s0 };
}

/** The simulated capture workers in their own process, once they poll. */
function spawnSimWorkers(server: TemporalServer, captureQueue: string): Promise<ReadyProcess> {
  const args = [server.address, server.namespace, captureQueue, String(SIM_WORKERS), String(CAPTURE_MS)];
  return spawnReady(SIM_SCRIPT, args, 'the simulated capture workers');
}

/** A receiver for the level's report: resolves `reported` when it arrives. */
async function reportReceiver(): Promise<{ url: string; reported: Promise<void>; close(): void }> {
  let reportArrived!: () => void;
  const reported = new Promise<void>((resolve) => (reportArrived = resolve));
  const receiver = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      res.writeHead(202).end('{}');
      if (req.url === '/report') reportArrived();
    });
  });
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', () => r()));
  return { url: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/report`, reported, close: () => receiver.close() };
}

function levelBody(pages: number, reportUrl: string): DispatchBody {
  const hosts = Math.max(1, Math.round(pages / PAGES_PER_HOST));
  return benchLevel({
    crawlId: `sim-${Date.now()}`,
    reportUrl,
    hostParallelism: SIM_WORKERS,
    pages: Array.from({ length: pages }, (_, i) => ({ url: `https://h${i % hosts}.sim.test/p/${i}`, follow: false })),
    deadline: new Date(Date.now() + 3_600_000).toISOString(),
  });
}

export async function coordinated(pages: number, server: TemporalServer = stackTemporal()): Promise<Measured & { events: number }> {
  const token = 'bench-token';
  const opts = benchFlowOptions(token, memoryStore('bench'));
  const { capture: _none, ...receiverOpts } = opts;
  const temporal = { ...opts.config.temporal, address: server.address, namespace: server.namespace };
  const receiver = await reportReceiver();
  const flow = await startFlow({ ...receiverOpts, config: { ...opts.config, temporal }, port: 0 });
  const sim = await spawnSimWorkers(server, temporal.captureQueue);
  const body = levelBody(pages, receiver.url);
  try {
    const m = await measure(
      server,
      async () => {
        await dispatch(flow, token, body);
        await receiver.reported;
      },
      sim.child.pid,
    );
    const connection = await Connection.connect({ address: server.address });
    const events = await historyEvents(new Client({ connection, namespace: server.namespace }), `capture-level-${body.crawlId}-0`);
    await connection.close();
    return { ...m, events };
  } finally {
    await stopProcess(sim.child);
    await flow.close();
    receiver.close();
  }
}

/** The floor: `pages` no-op activities through the same Temporal, SIM_WORKERS at a time, from one workflow-less client loop (activities need a workflow: a bare workflow schedules them in batches). */
export async function bare(pages: number, server: TemporalServer = stackTemporal()): Promise<Measured> {
  const opts = benchFlowOptions('bare', memoryStore('bench'));
  const queue = `${opts.config.temporal.flowQueue}-bare`;
  const native = await NativeConnection.connect({ address: server.address });
  const worker = await Worker.create({
    connection: native,
    namespace: server.namespace,
    taskQueue: queue,
    workflowsPath: new URL('./workflows/bare.ts', import.meta.url).pathname,
    activities: { noop: async () => new Promise<void>((r) => setTimeout(r, CAPTURE_MS)) },
    maxConcurrentActivityTaskExecutions: SIM_WORKERS,
  });
  const running = worker.run();
  const connection = await Connection.connect({ address: server.address });
  const client = new Client({ connection, namespace: server.namespace });
  try {
    // the same number of workflows as slices would be, each running its share of the activities
    const slices = Math.max(1, Math.ceil(pages / 1000));
    return await measure(server, async () => {
      await Promise.all(
        Array.from({ length: slices }, (_, i) =>
          client.workflow.execute('bareActivities', {
            taskQueue: queue,
            workflowId: `bare-${Date.now()}-${i}`,
            args: [Math.ceil(pages / slices), Math.ceil(SIM_WORKERS / slices)],
          }),
        ),
      );
    });
  } finally {
    worker.shutdown();
    await running;
    await native.close();
    await connection.close();
  }
}

const perPage = (seconds: number, pages: number): number => +((seconds * 1000) / pages).toFixed(3);

function record(server: ServerName, pages: number, load1: number, c: Measured & { events: number }, b: Measured): Record<string, unknown> {
  const pagesPerS = pages / c.seconds;
  const cpuMsPerPage = perPage(c.ownCpuS + c.temporalCpuS, pages);
  return {
    bench: 'coordination',
    temporal: server === 'stack' ? "the stack's dev server (SQLite in a file)" : 'a private dev server, history in memory',
    simulated: `${SIM_WORKERS} capture workers (one Temporal worker, ${SIM_WORKERS} slots, a process of their own) whose capture is a ${CAPTURE_MS} ms wait; ${pages / PAGES_PER_HOST} hosts`,
    pages,
    load1,
    seconds: +c.seconds.toFixed(2),
    pagesPerS: +pagesPerS.toFixed(1),
    cpuMsPerPage,
    cpuMsPerPageFlowProcess: perPage(c.ownCpuS, pages),
    cpuMsPerPageTemporal: perPage(c.temporalCpuS, pages),
    cpuMsPerPageSimulatedWorkers: perPage(c.simCpuS, pages),
    historyEventsPerPage: +(c.events / pages).toFixed(2),
    // the bare floor's worker runs in this process, its activities included
    bare: {
      seconds: +b.seconds.toFixed(2),
      pagesPerS: +(pages / b.seconds).toFixed(1),
      cpuMsPerPage: perPage(b.ownCpuS + b.temporalCpuS, pages),
      cpuMsPerPageTemporal: perPage(b.temporalCpuS, pages),
    },
    ratio: +(c.seconds / b.seconds).toFixed(3),
    goal: { pagesPerS: GOAL_PAGES_PER_S, cpuMsPerPage: GOAL_CPU_MS_PER_PAGE },
    pagesPerSMet: pagesPerS >= GOAL_PAGES_PER_S,
    met: pagesPerS >= GOAL_PAGES_PER_S && cpuMsPerPage < GOAL_CPU_MS_PER_PAGE,
  };
}

export async function run(
  sizes: readonly number[] = [2_000, 20_000],
  servers: readonly ServerName[] = ['stack', 'memory'],
): Promise<Record<string, unknown>[]> {
  quietRuntime();
  const out: Record<string, unknown>[] = [];
  for (const name of servers) {
    const server = name === 'stack' ? stackTemporal() : await memoryTemporal();
    try {
      for (const pages of sizes) {
        const load1 = load1Now();
        const c = await coordinated(pages, server);
        const b = await bare(pages, server);
        out.push(record(name, pages, load1, c, b));
      }
    } finally {
      await server.close();
    }
  }
  return out;
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) {
  const i = process.argv.indexOf('--pages');
  const sizes = i >= 0 ? [Number(process.argv[i + 1])] : undefined;
  if (sizes !== undefined && !(Number.isInteger(sizes[0]) && sizes[0]! >= PAGES_PER_HOST)) {
    console.error(`--pages must be a whole number ≥ ${PAGES_PER_HOST}`);
    process.exit(2);
  }
  const t = process.argv.indexOf('--temporal');
  const only = t >= 0 ? process.argv[t + 1] : undefined;
  if (only !== undefined && only !== 'stack' && only !== 'memory') {
    console.error('--temporal takes stack or memory');
    process.exit(2);
  }
  run(sizes, only !== undefined ? [only] : undefined).then(
    (rs) => {
      for (const r of rs) console.log(JSON.stringify(r));
      process.exit(0);
    },
    (err: unknown) => {
      console.error(err);
      process.exit(1);
    },
  );
}
