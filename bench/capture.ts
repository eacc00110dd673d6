// Capture benchmark: pages/s of the capture flow with one and with two capture workers, beside
// bare Playwright loading the same pages in the same run, and each worker's peak memory.
//
// A 4-host local site; each page loads 10 subresources (a stylesheet, a script, 8 images). The flow
// gets one level with every page (perHostDelayMs 0, hostParallelism 4, formats wacz, behaviors off as
// bare runs none: a dispatch without them gets the crawl default, whose cost is capture-costs.ts's;
// measured in the flow on this site, they were 0.63 s of a page's 1.1 s visit): its receiver
// and flow worker run in this process, its capture workers each in a process of their own
// (bench/support-capture-worker.ts: the real capture worker, Chromium sandboxed, writing to a
// store that only counts bytes; S3 would add upload time that is off the host's clock anyway).
// A worker's memory is its process tree's: the worker's node, its Chromium and the renderers.
// The goal is judged on their PSS summed (proportional set size, from /proc/<pid>/smaps_rollup:
// each shared page split among the processes sharing it, so the sum is what the tree takes of
// the machine's memory, the standard measure). Why not the RSS sum: it counts a shared page once
// per process that maps it, and a worker's tree is some 12 processes mapping the same Chromium
// binary (about 110 MiB resident in each renderer), so it grows with the number of processes,
// not with the memory they use (measured: an RSS sum of 1.5 GiB is a PSS sum of 0.7 GiB). Every
// measure is printed beside it: the RSS sum (an upper bound), the unique measure (private memory,
// the largest file-backed and shared parts once) and the worker's node's own peaks (heap).
// PSS is read at RSS-sum peaks, at most every PSS_EVERY_MS.
// Bare Playwright: the same Chromium binary, 4 workers (one per host), a fresh context per page,
// goto until load, half of its pages before the flow's levels and half after them. Goals (issue
// 25): flow with one worker / bare ≥ 0.9; peak memory < 1 GiB per worker. Bare runs twice: as
// Playwright launches Chromium (the goal's measure), and with the switches the flow launches it
// with (launch.ts: no WebUI omnibox popup per window), so what the flow's recording costs shows.
//
//   node bench/capture.ts               200 pages (npm run bench runs this size)
//   node bench/capture.ts --pages 2000  10× size
//   node bench/capture.ts --pages 40    a quick run
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { memoryStore } from '../src/flow/store.ts';
import { benchFlowOptions } from './support-flow.ts';
import { isMain, printAndExit } from './support-main.ts';
import { spawnReady, stopProcess, type ReadyProcess } from './support-process.ts';
import { BARE, bareRecords, capturePagesArg, FLOW_BEHAVIORS, memoryOf, ratioFigures, runFigures, runOnCaptureSite, startBenchFlow } from './support-capture.ts';
import type { CaptureRecord, ModeRun } from './support-capture.ts';
import type { NodeMemoryPeaks } from './support-capture-worker.ts';
import { descendants } from '../test/support/processes.ts';

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
  /** its proportional set size summed, read at RSS peaks (shared pages split among their sharers): the goal's measure */
  peakPssMiB?: number;
  /** the worker's node: its own peaks (process.memoryUsage: rss, heapTotal, heapUsed, external; MiB) */
  nodeMiB?: NodeMemoryPeaks;
  goal?: number;
  ok?: boolean;
}

/** pages a capture worker takes at once: 4 hosts at once never need more */
const WORKER_SLOTS = 8;
const WORKER_SCRIPT = fileURLToPath(new URL('./support-capture-worker.ts', import.meta.url));
const RATIO_GOAL = 0.9;
const MEMORY_GOAL_MIB = 1024;

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

/** A capture worker in a process of its own (bench/support-capture-worker.ts), once it polls. */
function spawnWorker(queue: string, name: string): Promise<ReadyProcess> {
  return spawnReady(WORKER_SCRIPT, [queue, String(WORKER_SLOTS), name], `capture worker ${name}`);
}

/** What a worker process says as it stops: bytes stored, pages captured, its node's memory peaks. */
interface WorkerStop {
  stored: number;
  pages: number;
  heap?: NodeMemoryPeaks;
}

/** Stops a worker process (it finishes what it holds) and reads what it stored. */
async function stopWorker(w: ReadyProcess): Promise<WorkerStop> {
  await stopProcess(w.child);
  const last = w.lines.map((l) => JSON.parse(l) as Partial<WorkerStop>).find((l) => l.stored !== undefined);
  return { stored: last?.stored ?? 0, pages: last?.pages ?? 0, ...(last?.heap !== undefined ? { heap: last.heap } : {}) };
}

interface FlowRun extends ModeRun {
  /** per capture worker: peak memory of its process tree, and the pages it captured */
  workers: { peak: { rss: number; unique: number; pss: number }; pages: number; heap?: NodeMemoryPeaks }[];
}

/** One level through the receiver and flow worker (this process) and `workers` capture worker processes. */
async function flowRun(urls: string[], workers: number): Promise<FlowRun> {
  let queue = '';
  const flow = await startBenchFlow((token) => {
    const { capture, ...opts } = benchFlowOptions(token, memoryStore('bench'));
    queue = capture!.config.temporal.captureQueue;
    return opts;
  });
  const procs: ReadyProcess[] = [];
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
    const run = await flow.level(urls, { behaviors: FLOW_BEHAVIORS.off });
    clearInterval(sampler);
    const stops: WorkerStop[] = [];
    for (const w of procs.splice(0)) stops.push(await stopWorker(w));
    if (stops.some((s) => s.stored === 0)) throw new Error(`a capture worker stored nothing: ${JSON.stringify(stops)}`);
    return { ...run, workers: peaks.map((peak, i) => ({ peak, pages: stops[i]!.pages, ...(stops[i]!.heap ? { heap: stops[i]!.heap } : {}) })) };
  } finally {
    clearInterval(sampler);
    for (const w of procs) w.child.kill('SIGKILL');
    await flow.close();
  }
}

const mib = (b: number): number => Math.round(b / 1024 / 1024);

/** A flow run's records: its figures, its ratios to bare, and each worker's peak memory. */
function flowRecords(base: Omit<CaptureBenchResult, 'mode'>, flow: FlowRun, bare: ModeRun, same: ModeRun): CaptureBenchResult[] {
  const workers = flow.workers.length;
  const ratio = bare.seconds / flow.seconds;
  return [
    { ...base, mode: 'flow', workers, pagesPerWorker: flow.workers.map((w) => w.pages), ...runFigures(flow, base.pages) },
    // the goal is one worker's; two on this 2-core machine share its cores and show the cost of a second Chromium
    { ...base, mode: 'ratio', workers, ...ratioFigures(flow, bare, same), ...(workers === 1 ? { goal: RATIO_GOAL, ok: ratio >= RATIO_GOAL } : {}) },
    ...flow.workers.map((w, i) => ({
      ...base,
      mode: 'memory' as const,
      workers,
      worker: i + 1,
      peakRssSumMiB: mib(w.peak.rss),
      peakMiB: mib(w.peak.unique),
      peakPssMiB: mib(w.peak.pss),
      ...(w.heap !== undefined ? { nodeMiB: w.heap } : {}),
      goal: MEMORY_GOAL_MIB,
      ok: w.peak.pss > 0 && mib(w.peak.pss) < MEMORY_GOAL_MIB,
    })),
  ];
}

export function run(pages = 200): Promise<CaptureBenchResult[]> {
  return runOnCaptureSite(
    'capture',
    pages,
    [BARE.playwright, BARE.flowSwitches],
    async (urls) => [await flowRun(urls, 1), await flowRun(urls, 2)],
    ({ base, total, bare: [bare, same], flows }): CaptureBenchResult[] => [
      ...bareRecords(base, total, bare!, same!),
      ...flows.flatMap((flow) => flowRecords(base, flow, bare!, same!)),
    ],
  );
}

if (isMain(import.meta.url)) printAndExit(run(capturePagesArg()));
