// Capture benchmark, the cost of in-page behaviors and of the quality check (issue 31): the in-process flow with behaviors off and on, and with qa on, bare Playwright without and with the same behaviors, CPU-s per page each way.
// (bench/capture.ts measures the capture workers as processes, 1 and 2, beside bare Playwright.)
//
// pages in the same run, and the peak memory of the flow process plus its Chromium.
//
// A 4-host local site; each page loads 10 subresources (a stylesheet, a script, 8 images). The flow
// gets one level with every page (perHostDelayMs 0, hostParallelism 4, formats wacz) and writes to
// a store that only counts bytes (S3 would add upload time that is off the host's clock anyway).
// Bare Playwright: the same Chromium binary, 4 workers (one per host), a fresh context per page,
// goto until load, half of its pages before the flow's level and half after it. Goals: ratio
// flow/bare ≥ 0.8; peak memory < 1 GiB. Bare runs twice: as Playwright launches Chromium (the
// goal's measure), and with the switches the flow launches it with (launch.ts: no WebUI omnibox
// popup per window), so what the flow's recording itself costs shows too.
//
// Cost of behaviors (issue 31): the flow's level above runs with behaviors off (behaviorsSeconds
// 0), so its ratio to bare is the recording's cost alone; the same pages go through the flow again
// with the crawl default (BEHAVIOR_DEFAULTS, browsertrix-behaviors in every page), beside bare
// Playwright with the flow's switches running the same behaviors the same way (behaviors.ts).
// `behaviors-cost` is CPU-s per page with them on and off, and on against bare with them on.
//
//   node bench/capture.ts               200 pages (npm run bench runs this size)
//   node bench/capture.ts --pages 2000  10× size
//   node bench/capture.ts --pages 40    a quick run
import { readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { DispatchBody } from '../src/domain/contract.ts';
import { BEHAVIOR_DEFAULTS } from '../src/domain/crawl.ts';
import { startFlow } from '../src/flow/server.ts';
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
import type { ArtifactStore } from '../src/flow/store.ts';
import { descendants } from '../test/support/processes.ts';
import { startSite } from '../test/support/site.ts';

export interface CaptureBenchResult extends CaptureRecord {
  bench: 'capture-costs';
  mode: 'flow' | 'bare' | 'bare-flow-switches' | 'ratio' | 'memory' | 'flow-behaviors' | 'bare-behaviors' | 'behaviors-cost' | 'qa-cost';
  /** peak of the private memory of flow + Chromium, shared parts counted once */
  peakMiB?: number;
  /** peak of the processes' RSS summed (shared pages counted once per process: an upper bound) */
  peakRssSumMiB?: number;
  goal?: number;
  ok?: boolean;
  /** behaviors-cost: CPU-s per page of the flow with behaviors off and on, bare with them on */
  cpuPerPageOff?: number;
  cpuPerPageOn?: number;
  cpuPerPageBareOn?: number;
  /** on / off, CPU and wall time; bare-with-behaviors CPU / the flow's with them */
  cpuOnOverOff?: number;
  secondsOnOverOff?: number;
  /** qa-cost: CPU-s per page with the quality check, and its ratios to the flow without it */
  cpuPerPageQa?: number;
  cpuQaOverOff?: number;
  secondsQaOverOff?: number;
  cpuRatioBehaviors?: number;
  behaviorsSeconds?: number;
}

/** This process and every process below it (Chromium and its renderers). */
function treePids(): number[] {
  return [process.pid, ...descendants().map((p) => p.pid)];
}

/**
 * Memory of the process tree, in bytes, from /proc/<pid>/status (cheap: smaps_rollup's PSS costs
 * the kernel a walk of Chromium's huge address space, more CPU than the flow being measured).
 * `rss` sums every process's RSS, an upper bound that counts the browser binary and shared memory
 * once per process; `unique` sums the private anonymous memory and adds the largest file-backed
 * and shared-memory parts once.
 */
function treeMemory(): { rss: number; unique: number } {
  let rss = 0;
  let anon = 0;
  let file = 0;
  let shmem = 0;
  for (const pid of treePids()) {
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

/** The flow's behaviors for a mode: off, or the crawl default. */
type Behaviors = NonNullable<DispatchBody['behaviors']>;
const BEHAVIORS_OFF: Behaviors = { seconds: 0, siteSpecific: false };
const BEHAVIORS_ON: Behaviors = { seconds: BEHAVIOR_DEFAULTS.behaviorsSeconds, siteSpecific: BEHAVIOR_DEFAULTS.siteBehaviors };

async function flowRun(urls: string[], behaviors: Behaviors, qa = false): Promise<ModeRun & { peak: { rss: number; unique: number } }> {
  const receiver = createServer((req, res) => {
    req.resume();
    req.on('end', () => res.writeHead(202).end('{}'));
  });
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', () => r()));
  let stored = 0;
  const store: ArtifactStore = {
    bucket: 'bench',
    async put(_key, body) {
      stored += body.length;
    },
  };
  const token = 'bench-token';
  const flow = await startFlow({
    ...benchFlowOptions(token, store),
    port: 0,
    reportRetry: { attempts: 1, baseDelayMs: 1 },
  });
  const peak = { rss: 0, unique: 0 };
  const sampler = setInterval(() => {
    const m = treeMemory();
    peak.rss = Math.max(peak.rss, m.rss);
    peak.unique = Math.max(peak.unique, m.unique);
  }, 500);
  try {
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
      behaviors,
      ...(qa ? { qa: true } : {}),
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
    const { cpuSeconds, cpuByProcess } = cpuSince(cpu0);
    const failed = run.report!.pages.filter((p) => p.status !== 'captured');
    if (failed.length > 0) throw new Error(`${failed.length} pages not captured: ${JSON.stringify(failed[0])}`);
    if (stored === 0) throw new Error('nothing was stored');
    return { seconds, cpuSeconds, cpuByProcess, load1, peak };
  } finally {
    clearInterval(sampler);
    await flow.close();
    await new Promise((r) => receiver.close(r));
  }
}

const fixed = (n: number, digits: number): number => Number(n.toFixed(digits));

/** The flow and bare with behaviors on, and what they cost against the flow with them off. */
function behaviorRecords(base: Omit<CaptureBenchResult, 'mode'>, total: number, off: ModeRun, on: ModeRun, bareOn: ModeRun): CaptureBenchResult[] {
  const mode = (m: 'flow-behaviors' | 'bare-behaviors', r: ModeRun): CaptureBenchResult => ({
    ...base,
    mode: m,
    behaviorsSeconds: BEHAVIORS_ON.seconds,
    seconds: fixed(r.seconds, 2),
    pagesPerSecond: fixed(total / r.seconds, 2),
    cpuSeconds: fixed(r.cpuSeconds, 1),
    cpuByProcess: r.cpuByProcess,
    load1: fixed(r.load1, 2),
  });
  return [
    mode('flow-behaviors', on),
    mode('bare-behaviors', bareOn),
    {
      ...base,
      mode: 'behaviors-cost',
      behaviorsSeconds: BEHAVIORS_ON.seconds,
      cpuPerPageOff: fixed(off.cpuSeconds / total, 3),
      cpuPerPageOn: fixed(on.cpuSeconds / total, 3),
      cpuPerPageBareOn: fixed(bareOn.cpuSeconds / total, 3),
      cpuOnOverOff: fixed(on.cpuSeconds / off.cpuSeconds, 3),
      secondsOnOverOff: fixed(on.seconds / off.seconds, 3),
      cpuRatioBehaviors: fixed(bareOn.cpuSeconds / on.cpuSeconds, 3),
    },
  ];
}

export async function run(pages = 200): Promise<CaptureBenchResult[]> {
  const perHost = Math.max(1, Math.round(pages / HOSTS.length));
  const site = await startSite({ hosts: Object.fromEntries(HOSTS.map((n) => [n, { pages: hostPages(perHost) }])) });
  try {
    const byHost = HOSTS.map((n) => Array.from({ length: perHost }, (_, j) => site.url(n, `/p${j}`)));
    const interleaved: string[] = [];
    for (let j = 0; j < perHost; j++) for (const list of byHost) interleaved.push(list[j]!);
    const total = interleaved.length;
    const base = { bench: 'capture-costs' as const, pages: total, subresourcesPerPage: SUBRESOURCES, hostParallelism: PARALLELISM };
    // bare runs half its pages before the flow and half after: the machine's drift over the run
    // (other work, the host's own CPU share) then weighs on both modes alike
    const half = Math.ceil(perHost / 2);
    const first = byHost.map((urls) => urls.slice(0, half));
    const second = byHost.map((urls) => urls.slice(half));
    const bareBefore = await bareRun(first, ARGS);
    const sameBefore = await bareRun(first, FLOW_SWITCHES);
    const bxBefore = await bareRun(first, FLOW_SWITCHES, true);
    const flow = await flowRun(interleaved, BEHAVIORS_OFF);
    const flowBx = await flowRun(interleaved, BEHAVIORS_ON);
    const flowQa = await flowRun(interleaved, BEHAVIORS_OFF, true);
    const bareAfter = await bareRun(second, ARGS);
    const sameAfter = await bareRun(second, FLOW_SWITCHES);
    const bxAfter = await bareRun(second, FLOW_SWITCHES, true);
    const bare = sumRuns(bareBefore, bareAfter);
    const same = sumRuns(sameBefore, sameAfter);
    const bareBx = sumRuns(bxBefore, bxAfter);
    const flowPps = total / flow.seconds;
    const barePps = total / bare.seconds;
    const samePps = total / same.seconds;
    const ratio = flowPps / barePps;
    const peakMiB = flow.peak.unique / 1024 / 1024;
    return [
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
      {
        ...base,
        mode: 'flow',
        seconds: Number(flow.seconds.toFixed(2)),
        pagesPerSecond: Number(flowPps.toFixed(2)),
        cpuSeconds: Number(flow.cpuSeconds.toFixed(1)),
        cpuByProcess: flow.cpuByProcess,
        load1: Number(flow.load1.toFixed(2)),
      },
      {
        ...base,
        mode: 'ratio',
        ratio: Number(ratio.toFixed(3)),
        cpuRatio: Number((bare.cpuSeconds / flow.cpuSeconds).toFixed(3)),
        ratioSameSwitches: Number((flowPps / samePps).toFixed(3)),
        cpuRatioSameSwitches: Number((same.cpuSeconds / flow.cpuSeconds).toFixed(3)),
        goal: 0.8,
        ok: ratio >= 0.8,
      },
      { ...base, mode: 'memory', peakMiB: Math.round(peakMiB), peakRssSumMiB: Math.round(flow.peak.rss / 1024 / 1024), goal: 1024, ok: peakMiB < 1024 },
      ...behaviorRecords(base, total, flow, flowBx, bareBx),
      {
        ...base,
        mode: 'qa-cost',
        cpuPerPageOff: fixed(flow.cpuSeconds / total, 3),
        cpuPerPageQa: fixed(flowQa.cpuSeconds / total, 3),
        cpuQaOverOff: fixed(flowQa.cpuSeconds / flow.cpuSeconds, 3),
        secondsQaOverOff: fixed(flowQa.seconds / flow.seconds, 3),
        load1: fixed(flowQa.load1, 2),
      },
    ];
  } finally {
    await site.close();
  }
}

if (isMain(import.meta.url)) printAndExit(run(pagesArg(200, HOSTS.length)));
