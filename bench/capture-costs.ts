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
// with the crawl default (FLOW_BEHAVIORS.on, browsertrix-behaviors in every page), beside bare
// Playwright with the flow's switches running the same behaviors the same way (behaviors.ts).
// `behaviors-cost` is CPU-s per page with them on and off, and on against bare with them on.
//
//   node bench/capture-costs.ts               200 pages (npm run bench runs this size)
//   node bench/capture-costs.ts --pages 2000  10× size
//   node bench/capture-costs.ts --pages 40    a quick run
import type { CaptureBehaviors } from '../src/domain/behavior-budget.ts';
import type { ArtifactStore } from '../src/flow/store.ts';
import { benchFlowOptions } from './support-flow.ts';
import { round } from './support-figures.ts';
import { isMain, printAndExit } from './support-main.ts';
import { BARE, bareRecords, capturePagesArg, FLOW_BEHAVIORS, memoryOf, ratioFigures, runFigures, runOnCaptureSite, startBenchFlow } from './support-capture.ts';
import type { CaptureRecord, ModeRun } from './support-capture.ts';
import { descendants } from '../test/support/processes.ts';

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

async function flowRun(urls: string[], behaviors: CaptureBehaviors, qa = false): Promise<ModeRun & { peak: { rss: number; unique: number } }> {
  let stored = 0;
  const store: ArtifactStore = {
    bucket: 'bench',
    async put(_key, body) {
      stored += body.length;
      return {};
    },
  };
  const flow = await startBenchFlow((token) => benchFlowOptions(token, store));
  const peak = { rss: 0, unique: 0 };
  const sampler = setInterval(() => {
    const m = memoryOf(treePids());
    peak.rss = Math.max(peak.rss, m.rss);
    peak.unique = Math.max(peak.unique, m.unique);
  }, 500);
  try {
    const run = await flow.level(urls, { behaviors, ...(qa ? { qa: true } : {}) });
    if (stored === 0) throw new Error('nothing was stored');
    return { ...run, peak };
  } finally {
    clearInterval(sampler);
    await flow.close();
  }
}

/** The flow and bare with behaviors on, and what they cost against the flow with them off. */
function behaviorRecords(base: Omit<CaptureBenchResult, 'mode'>, total: number, off: ModeRun, on: ModeRun, bareOn: ModeRun): CaptureBenchResult[] {
  const mode = (m: 'flow-behaviors' | 'bare-behaviors', r: ModeRun): CaptureBenchResult => ({
    ...base,
    mode: m,
    behaviorsSeconds: FLOW_BEHAVIORS.on.seconds,
    ...runFigures(r, total),
  });
  return [
    mode('flow-behaviors', on),
    mode('bare-behaviors', bareOn),
    {
      ...base,
      mode: 'behaviors-cost',
      behaviorsSeconds: FLOW_BEHAVIORS.on.seconds,
      cpuPerPageOff: round(off.cpuSeconds / total, 3),
      cpuPerPageOn: round(on.cpuSeconds / total, 3),
      cpuPerPageBareOn: round(bareOn.cpuSeconds / total, 3),
      cpuOnOverOff: round(on.cpuSeconds / off.cpuSeconds, 3),
      secondsOnOverOff: round(on.seconds / off.seconds, 3),
      cpuRatioBehaviors: round(bareOn.cpuSeconds / on.cpuSeconds, 3),
    },
  ];
}

export function run(pages = 200): Promise<CaptureBenchResult[]> {
  return runOnCaptureSite(
    'capture-costs',
    pages,
    [BARE.playwright, BARE.flowSwitches, { ...BARE.flowSwitches, behaviors: true }],
    async (urls) => [await flowRun(urls, FLOW_BEHAVIORS.off), await flowRun(urls, FLOW_BEHAVIORS.on), await flowRun(urls, FLOW_BEHAVIORS.off, true)],
    ({ base, total, bare: [bare, same, bareBx], flows: [flow, flowBx, flowQa] }): CaptureBenchResult[] => {
      const ratio = bare!.seconds / flow!.seconds;
      const peakMiB = flow!.peak.unique / 1024 / 1024;
      return [
        ...bareRecords(base, total, bare!, same!),
        { ...base, mode: 'flow', ...runFigures(flow!, total) },
        { ...base, mode: 'ratio', ...ratioFigures(flow!, bare!, same!), goal: 0.8, ok: ratio >= 0.8 },
        { ...base, mode: 'memory', peakMiB: Math.round(peakMiB), peakRssSumMiB: Math.round(flow!.peak.rss / 1024 / 1024), goal: 1024, ok: peakMiB < 1024 },
        ...behaviorRecords(base, total, flow!, flowBx!, bareBx!),
        {
          ...base,
          mode: 'qa-cost',
          cpuPerPageOff: round(flow!.cpuSeconds / total, 3),
          cpuPerPageQa: round(flowQa!.cpuSeconds / total, 3),
          cpuQaOverOff: round(flowQa!.cpuSeconds / flow!.cpuSeconds, 3),
          secondsQaOverOff: round(flowQa!.seconds / flow!.seconds, 3),
          load1: flowQa!.load1,
        },
      ];
    },
  );
}

if (isMain(import.meta.url)) printAndExit(run(capturePagesArg()));
