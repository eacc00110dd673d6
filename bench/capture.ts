// Capture benchmark: pages/s of the capture flow with one and with two capture workers, beside
// bare Playwright loading the same pages in the same run, and each worker's peak memory.
//
// A 4-host local site; each page loads 10 subresources (a stylesheet, a script, 8 images). The flow
// gets one level with every page (perHostDelayMs 0, hostParallelism 4, formats wacz): its receiver
// and flow worker run in this process, its capture workers each in a process of their own
// (bench/support-capture-worker.ts: the real capture worker, Chromium sandboxed, writing to a
// store that only counts bytes; S3 would add upload time that is off the host's clock anyway).
// A worker's memory is its process tree's: the worker's node, its Chromium and the renderers.
// The goal is judged on their RSS summed from /proc (an upper bound: shared pages count once per
// process); beside it the unique measure (private memory, the largest file-backed and shared
// parts once) and the PSS sum (shared pages split among their sharers), read at RSS peaks.
// Bare Playwright: the same Chromium binary, 4 workers (one per host), a fresh context per page,
// goto until load, half of its pages before the flow's levels and half after them. Goals (issue
// 25): flow with one worker / bare ≥ 0.9; peak memory < 1 GiB per worker. Bare runs twice: as
// Playwright launches Chromium (the goal's measure), and with the switches the flow launches it
// with (launch.ts: no WebUI omnibox popup per window), so what the flow's recording costs shows.
//
//   node bench/capture.ts               200 pages (npm run bench runs this size)
//   node bench/capture.ts --pages 2000  10× size
//   node bench/capture.ts --pages 40    a quick run
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import type { DispatchBody } from '../src/domain/contract.ts';
import { startFlow } from '../src/flow/server.ts';
import { memoryStore } from '../src/flow/store.ts';
import { benchFlowOptions } from './support-flow.ts';
import { isMain, pagesArg, printAndExit } from './support-main.ts';
import {
  ARGS,
  bareRun,
  cpuSince,
  FLOW_SWITCHES,
  hostPages,
  HOSTS,
  PARALLELISM,
  SUBRESOURCES,
  sumRuns,
  treeCpuByKind,
  type CaptureRecord,
  type ModeRun,
} from './support-capture.ts';
import { descendants } from '../test/support/processes.ts';
import { startSite } from '../test/support/site.ts';

export interface CaptureBenchResult extends CaptureRecord {
  bench: 'capture';
  mode: 'flow' | 'bare' | 'bare-flow-switches' | 'ratio' | 'memory';
  /** capture worker processes (flow, ratio and memory records) */
  workers?: number;
  /** memory: which worker (1-based) */
  worker?: number;
  /** flow: pages each worker captured */
  pagesPerWorker?: number[];
  /** peak of the worker's process tree's RSS summed (shared pages once per process: an upper bound) */
  peakRssSumMiB?: number;
  /** peak of its private memory, shared parts counted once */
  peakMiB?: number;
  /** its proportional set size summed, read at RSS peaks (shared pages split among their sharers) */
  peakPssMiB?: number;
  goal?: number;
  ok?: boolean;
}

/** pages a capture worker takes at once: 4 hosts at once never need more */
const WORKER_SLOTS = 8;
const WORKER_SCRIPT = fileURLToPath(new URL('./support-capture-worker.ts', import.meta.url));
const RATIO_GOAL = 0.9;
const MEMORY_GOAL_MIB = 1024;

/**
 * Memory of these processes, in bytes, from /proc/<pid>/status (cheap: smaps_rollup's PSS costs
 * the kernel a walk of Chromium's huge address space, more CPU than the flow being measured).
 * `rss` sums every process's RSS, an upper bound that counts the browser binary and shared memory
 * once per process; `unique` sums the private anonymous memory and adds the largest file-backed
 * and shared-memory parts once.
 */
function memoryOf(pids: number[]): { rss: number; unique: number } {
  let rss = 0;
  let anon = 0;
  let file = 0;
  let shmem = 0;
  for (const pid of pids) {
    let status = '';
    try {
      status = readFileSync(`/proc/${pid}/status`, 'utf8');
    } catch {
      continue;
    }
    const kb = (field: string): number => Number(new RegExp(`^${field}:\\s+(\\d+)`, 'm').exec(status)?.[1] ?? 0) * 1024;
    rss += kb('VmRSS');
    anon += kb('RssAnon');
    file = Math.max(file, kb('RssFile'));
    shmem = Math.max(shmem, kb('RssShmem'));
  }
  return { rss, unique: anon + file + shmem };
}

/** Each root's process tree: the process and every process below it. */
function subtrees(roots: number[]): number[][] {
  const all = descendants();
  return roots.map((root) => {
    const node = all.find((p) => p.pid === root);
    return node === undefined ? [] : [root, ...descendants(node).map((p) => p.pid)];
  });
}

/** Proportional set size summed (shared pages split among the processes sharing them): the
 * truest sum, but smaps_rollup costs the kernel tens of ms per Chromium process, so it is read
 * only when the RSS sum reaches a new peak, at most every PSS_EVERY_MS. */
function pssOf(pids: number[]): number {
  let pss = 0;
  for (const pid of pids) {
    try {
      pss += Number(/^Pss:\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8'))?.[1] ?? 0) * 1024;
    } catch {
      continue;
    }
  }
  return pss;
}
const PSS_EVERY_MS = 3000;

interface WorkerProcess {
  child: ChildProcess;
  lines: string[];
}

/** A capture worker in a process of its own (bench/support-capture-worker.ts), once it polls. */
async function spawnWorker(queue: string, name: string): Promise<WorkerProcess> {
  const child = spawn(process.execPath, [...process.execArgv, WORKER_SCRIPT, queue, String(WORKER_SLOTS), name], { stdio: ['ignore', 'pipe', 'inherit'] });
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
    child.once('exit', (code) => reject(new Error(`capture worker ${name} exited ${code} before it was ready`)));
  });
  return { child, lines };
}

/** Stops a worker process (it finishes what it holds) and reads what it stored. */
async function stopWorker(w: WorkerProcess): Promise<{ stored: number; pages: number }> {
  const exited = new Promise<void>((r) => w.child.once('exit', () => r()));
  w.child.kill('SIGTERM');
  await exited;
  const last = w.lines.map((l) => JSON.parse(l) as { stored?: number; pages?: number }).find((l) => l.stored !== undefined);
  return { stored: last?.stored ?? 0, pages: last?.pages ?? 0 };
}

interface FlowRun extends ModeRun {
  /** per capture worker: peak memory of its process tree, and the pages it captured */
  workers: { peak: { rss: number; unique: number; pss: number }; pages: number }[];
}

/** One level through the receiver and flow worker (this process) and `workers` capture worker processes. */
async function flowRun(urls: string[], workers: number): Promise<FlowRun> {
  const receiver = createServer((req, res) => {
    req.resume();
    req.on('end', () => res.writeHead(202).end('{}'));
  });
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', () => r()));
  const token = 'bench-token';
  const { capture, ...opts } = benchFlowOptions(token, memoryStore('bench'));
  const queue = capture!.config.temporal.captureQueue;
  const flow = await startFlow({ ...opts, port: 0, reportRetry: { attempts: 1, baseDelayMs: 1 } });
  const procs: WorkerProcess[] = [];
  const peaks = Array.from({ length: workers }, () => ({ rss: 0, unique: 0, pss: 0, pssAt: 0 }));
  let sampler: NodeJS.Timeout | undefined;
  try {
    for (let i = 0; i < workers; i++) procs.push(await spawnWorker(queue, `bench-capture-worker-${i + 1}`));
    sampler = setInterval(() => {
      subtrees(procs.map((w) => w.child.pid!)).forEach((pids, i) => {
        const m = memoryOf(pids);
        const peak = peaks[i]!;
        if (m.rss > peak.rss && Date.now() - peak.pssAt >= PSS_EVERY_MS) {
          peak.pss = Math.max(peak.pss, pssOf(pids));
          peak.pssAt = Date.now();
        }
        peak.rss = Math.max(peak.rss, m.rss);
        peak.unique = Math.max(peak.unique, m.unique);
      });
    }, 500);
    const body: DispatchBody = {
      crawlId: `bench-${Date.now()}`,
      depth: 0,
      orgId: 'bench',
      reportUrl: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/r`,
      formats: ['wacz'],
      signing: false,
      perHostDelayMs: 0,
      hostParallelism: PARALLELISM,
      notBefore: {},
      pages: urls.map((url) => ({ url, follow: false })),
    };
    const load1 = loadavg()[0]!;
    const cpu0 = treeCpuByKind();
    const started = Date.now();
    const res = await fetch(flow.webhookUrl, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    if (res.status !== 202) throw new Error(`dispatch answered ${res.status}: ${await res.text()}`);
    const run = await flow.waitForLevel(body.crawlId, 0, 3_600_000);
    const seconds = (Date.now() - started) / 1000;
    // read while the worker processes live: their CPU is theirs until they are reaped
    const { cpuSeconds, cpuByProcess } = cpuSince(cpu0);
    clearInterval(sampler);
    const failed = run.report!.pages.filter((p) => p.status !== 'captured');
    if (failed.length > 0) throw new Error(`${failed.length} pages not captured: ${JSON.stringify(failed[0])}`);
    const stops: { stored: number; pages: number }[] = [];
    for (const w of procs.splice(0)) stops.push(await stopWorker(w));
    if (stops.some((s) => s.stored === 0)) throw new Error(`a capture worker stored nothing: ${JSON.stringify(stops)}`);
    return { seconds, cpuSeconds, cpuByProcess, load1, workers: peaks.map((peak, i) => ({ peak, pages: stops[i]!.pages })) };
  } finally {
    clearInterval(sampler);
    for (const w of procs) w.child.kill('SIGKILL');
    await flow.close();
    await new Promise((r) => receiver.close(r));
  }
}

export async function run(pages = 200): Promise<CaptureBenchResult[]> {
  const perHost = Math.max(1, Math.round(pages / HOSTS.length));
  const site = await startSite({ hosts: Object.fromEntries(HOSTS.map((n) => [n, { pages: hostPages(perHost) }])) });
  try {
    const byHost = HOSTS.map((n) => Array.from({ length: perHost }, (_, j) => site.url(n, `/p${j}`)));
    const interleaved: string[] = [];
    for (let j = 0; j < perHost; j++) for (const list of byHost) interleaved.push(list[j]!);
    const total = interleaved.length;
    const base = { bench: 'capture' as const, pages: total, subresourcesPerPage: SUBRESOURCES, hostParallelism: PARALLELISM };
    // bare runs half its pages before the flow and half after: the machine's drift over the run
    // (other work, the host's own CPU share) then weighs on both modes alike
    const half = Math.ceil(perHost / 2);
    const first = byHost.map((urls) => urls.slice(0, half));
    const second = byHost.map((urls) => urls.slice(half));
    const bareBefore = await bareRun(first, ARGS);
    const sameBefore = await bareRun(first, FLOW_SWITCHES);
    const flows = [await flowRun(interleaved, 1), await flowRun(interleaved, 2)];
    const bareAfter = await bareRun(second, ARGS);
    const sameAfter = await bareRun(second, FLOW_SWITCHES);
    const bare = sumRuns(bareBefore, bareAfter);
    const same = sumRuns(sameBefore, sameAfter);
    const barePps = total / bare.seconds;
    const samePps = total / same.seconds;
    const mib = (b: number): number => Math.round(b / 1024 / 1024);
    const out: CaptureBenchResult[] = [
      {
        ...base,
        mode: 'bare',
        seconds: Number(bare.seconds.toFixed(2)),
        pagesPerSecond: Number(barePps.toFixed(2)),
        cpuSeconds: Number(bare.cpuSeconds.toFixed(1)),
        cpuByProcess: bare.cpuByProcess,
        load1: Number(bare.load1.toFixed(2)),
      },
      {
        ...base,
        mode: 'bare-flow-switches',
        seconds: Number(same.seconds.toFixed(2)),
        pagesPerSecond: Number(samePps.toFixed(2)),
        cpuSeconds: Number(same.cpuSeconds.toFixed(1)),
        cpuByProcess: same.cpuByProcess,
        load1: Number(same.load1.toFixed(2)),
      },
    ];
    for (const flow of flows) {
      const workers = flow.workers.length;
      const flowPps = total / flow.seconds;
      const ratio = flowPps / barePps;
      out.push(
        {
          ...base,
          mode: 'flow',
          workers,
          pagesPerWorker: flow.workers.map((w) => w.pages),
          seconds: Number(flow.seconds.toFixed(2)),
          pagesPerSecond: Number(flowPps.toFixed(2)),
          cpuSeconds: Number(flow.cpuSeconds.toFixed(1)),
          cpuByProcess: flow.cpuByProcess,
          load1: Number(flow.load1.toFixed(2)),
        },
        // the goal is one worker's; two on this 2-core machine share its cores and show the cost of a second Chromium
        {
          ...base,
          mode: 'ratio',
          workers,
          ratio: Number(ratio.toFixed(3)),
          cpuRatio: Number((bare.cpuSeconds / flow.cpuSeconds).toFixed(3)),
          ratioSameSwitches: Number((flowPps / samePps).toFixed(3)),
          cpuRatioSameSwitches: Number((same.cpuSeconds / flow.cpuSeconds).toFixed(3)),
          ...(workers === 1 ? { goal: RATIO_GOAL, ok: ratio >= RATIO_GOAL } : {}),
        },
        ...flow.workers.map((w, i) => ({
          ...base,
          mode: 'memory' as const,
          workers,
          worker: i + 1,
          peakRssSumMiB: mib(w.peak.rss),
          peakMiB: mib(w.peak.unique),
          peakPssMiB: mib(w.peak.pss),
          goal: MEMORY_GOAL_MIB,
          ok: mib(w.peak.rss) < MEMORY_GOAL_MIB,
        })),
      );
    }
    return out;
  } finally {
    await site.close();
  }
}

if (isMain(import.meta.url)) printAndExit(run(pagesArg(200, HOSTS.length)));
