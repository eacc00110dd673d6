// The capture tier's coordination at scale, by simulation (issue 25): the real receiver, level and
// slice workflows and Temporal (the stack's dev server) feed SIM_WORKERS simulated capture workers
// — one Temporal worker on the capture queue with that many activity slots, whose capturePage
// waits CAPTURE_MS (the calibrated stand-in for Chromium, in this bench only), signals hostDone
// and answers as a capture would. A level of N pages on N/20 hosts is dispatched and timed until
// its report arrives. What is simulated: the browser, the page and the upload; what is real: every
// workflow task, timer, signal, activity and the report.
//
//   node bench/coordination.ts [--pages N]   (npm run bench runs 2,000 and 20,000)
//   BENCH_TEMPORAL_PID=<pid>                 the Temporal server whose CPU is counted, when it is
//                                            not the stack's (.stack/pids/temporal.json)
//
// Printed per size (2,000 and 20,000 pages): pages/s (the coordination's ceiling: the simulated
// workers have slots to spare), CPU ms per page of this process (receiver, workflows, the
// simulated workers' own bookkeeping included) and of the Temporal server, history events per
// page, and the bare floor beside it: the same number of no-op activities through the same
// Temporal with no pacing, slicing or report (ratio = coordinated / bare time).
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import { Context } from '@temporalio/activity';
import { Client, Connection } from '@temporalio/client';
import { NativeConnection, Runtime, Worker } from '@temporalio/worker';
import type { CapturePageInput, CapturePageResult } from '../src/flow/activities/types.ts';
import { startFlow } from '../src/flow/server.ts';
import { hostDoneSignal } from '../src/flow/workflows/messages.ts';
import { memoryStore } from '../src/flow/store.ts';
import { benchFlowOptions } from './support-flow.ts';

const SIM_WORKERS = 100;
const CAPTURE_MS = 50;
const PAGES_PER_HOST = 20;
const GOAL_PAGES_PER_S = 300;
const GOAL_CPU_MS_PER_PAGE = 2;

/** The Temporal server's pid, for its CPU: BENCH_TEMPORAL_PID, else the stack's record of it. */
function temporalPid(): number | undefined {
  const given = Number(process.env.BENCH_TEMPORAL_PID);
  if (Number.isInteger(given) && given > 0) return given;
  try {
    return (JSON.parse(readFileSync(new URL('../.stack/pids/temporal.json', import.meta.url), 'utf8')) as { pid: number }).pid;
  } catch {
    return undefined;
  }
}

/** CPU seconds a process has used (utime + stime from /proc). */
function processCpu(pid: number | undefined): number {
  if (pid === undefined) return 0;
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return 0;
  }
}

const ownCpu = (): number => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1e6;
};

async function simulatedCapture(input: CapturePageInput): Promise<CapturePageResult> {
  const ctx = Context.current();
  const submittedAt = Date.now();
  await new Promise((r) => setTimeout(r, CAPTURE_MS));
  const finishedAt = Date.now();
  await ctx.client.workflow
    .getHandle(ctx.info.workflowExecution!.workflowId)
    .signal(hostDoneSignal, { index: input.index, attempt: input.attempt, submittedAt, finishedAt });
  return { kind: 'visited', submittedAt, finishedAt, status: 'captured', manifest: true };
}

async function historyEvents(client: Client, levelId: string): Promise<number> {
  let events = 0;
  for await (const w of client.workflow.list({ query: `WorkflowId STARTS_WITH "${levelId}"` })) events += w.historyLength ?? 0;
  return events;
}

interface Measured {
  seconds: number;
  ownCpuS: number;
  temporalCpuS: number;
}

async function measure(fn: () => Promise<void>): Promise<Measured> {
  const pid = temporalPid();
  const [c0, t0, w0] = [ownCpu(), processCpu(pid), Date.now()];
  await fn();
  return { seconds: (Date.now() - w0) / 1000, ownCpuS: ownCpu() - c0, temporalCpuS: processCpu(pid) - t0 };
}

export async function coordinated(pages: number): Promise<Measured & { events: number }> {
  const token = 'bench-token';
  const opts = benchFlowOptions(token, memoryStore('bench'));
  const { capture: _none, ...receiverOpts } = opts;
  const captureQueue = opts.config.temporal.captureQueue;
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
  const reportUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
  const flow = await startFlow({ ...receiverOpts, port: 0 });
  const native = await NativeConnection.connect({ address: opts.config.temporal.address });
  const sim = await Worker.create({
    connection: native,
    namespace: opts.config.temporal.namespace,
    taskQueue: captureQueue,
    activities: { capturePage: simulatedCapture },
    maxConcurrentActivityTaskExecutions: SIM_WORKERS,
  });
  const simRun = sim.run();
  const hosts = Math.max(1, Math.round(pages / PAGES_PER_HOST));
  const crawlId = `sim-${Date.now()}`;
  const body = {
    crawlId,
    depth: 0,
    orgId: 'bench',
    reportUrl: `${reportUrl}/report`,
    formats: ['wacz'],
    signing: false,
    perHostDelayMs: 0,
    hostParallelism: SIM_WORKERS,
    notBefore: {},
    pages: Array.from({ length: pages }, (_, i) => ({ url: `https://h${i % hosts}.sim.test/p/${i}`, follow: false })),
    deadline: new Date(Date.now() + 3_600_000).toISOString(),
  };
  try {
    const m = await measure(async () => {
      const res = await fetch(flow.webhookUrl, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      if (res.status !== 202) throw new Error(`dispatch answered ${res.status}: ${await res.text()}`);
      await reported;
    });
    const connection = await Connection.connect({ address: opts.config.temporal.address });
    const events = await historyEvents(new Client({ connection, namespace: opts.config.temporal.namespace }), `capture-level-${crawlId}-0`);
    await connection.close();
    return { ...m, events };
  } finally {
    sim.shutdown();
    await simRun;
    await native.close();
    await flow.close();
    receiver.close();
  }
}

/** The floor: `pages` no-op activities through the same Temporal, SIM_WORKERS at a time, from one workflow-less client loop (activities need a workflow: a bare workflow schedules them in batches). */
export async function bare(pages: number): Promise<Measured> {
  const opts = benchFlowOptions('bare', memoryStore('bench'));
  const queue = `${opts.config.temporal.flowQueue}-bare`;
  const native = await NativeConnection.connect({ address: opts.config.temporal.address });
  const worker = await Worker.create({
    connection: native,
    namespace: opts.config.temporal.namespace,
    taskQueue: queue,
    workflowsPath: new URL('./workflows/bare.ts', import.meta.url).pathname,
    activities: { noop: async () => new Promise<void>((r) => setTimeout(r, CAPTURE_MS)) },
    maxConcurrentActivityTaskExecutions: SIM_WORKERS,
  });
  const running = worker.run();
  const connection = await Connection.connect({ address: opts.config.temporal.address });
  const client = new Client({ connection, namespace: opts.config.temporal.namespace });
  try {
    // the same number of workflows as slices would be, each running its share of the activities
    const slices = Math.max(1, Math.ceil(pages / 1000));
    return await measure(async () => {
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

export async function run(sizes: readonly number[] = [2_000, 20_000]): Promise<Record<string, unknown>[]> {
  try {
    Runtime.install({ logger: { log() {}, trace() {}, debug() {}, info() {}, warn() {}, error() {} } as never });
  } catch {
    // installed already
  }
  const out: Record<string, unknown>[] = [];
  for (const pages of sizes) {
    const load1 = loadavg()[0]!;
    const c = await coordinated(pages);
    const b = await bare(pages);
    const pagesPerS = pages / c.seconds;
    const cpuMsPerPage = ((c.ownCpuS + c.temporalCpuS) * 1000) / pages;
    out.push({
      bench: 'coordination',
      simulated: `${SIM_WORKERS} capture workers (one Temporal worker, ${SIM_WORKERS} slots) whose capture is a ${CAPTURE_MS} ms wait; ${pages / PAGES_PER_HOST} hosts`,
      pages,
      load1,
      seconds: +c.seconds.toFixed(2),
      pagesPerS: +pagesPerS.toFixed(1),
      cpuMsPerPage: +cpuMsPerPage.toFixed(3),
      cpuMsPerPageFlowProcess: +((c.ownCpuS * 1000) / pages).toFixed(3),
      cpuMsPerPageTemporal: +((c.temporalCpuS * 1000) / pages).toFixed(3),
      historyEventsPerPage: +(c.events / pages).toFixed(2),
      bare: {
        seconds: +b.seconds.toFixed(2),
        pagesPerS: +(pages / b.seconds).toFixed(1),
        cpuMsPerPage: +(((b.ownCpuS + b.temporalCpuS) * 1000) / pages).toFixed(3),
      },
      ratio: +(c.seconds / b.seconds).toFixed(3),
      goal: { pagesPerS: GOAL_PAGES_PER_S, cpuMsPerPage: GOAL_CPU_MS_PER_PAGE },
      met: pagesPerS >= GOAL_PAGES_PER_S && cpuMsPerPage < GOAL_CPU_MS_PER_PAGE,
    });
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
  run(sizes).then(
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
