// What the capture benches share (bench/capture.ts: the capture workers as processes;
// bench/capture-costs.ts: the cost of behaviors and qa): the site, bare Playwright loading it
// around the flow's runs, one level through the flow, the CPU and memory the process tree used,
// and the figures each mode's record carries.
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { chromium } from 'playwright-core';
import type { CaptureBehaviors } from '../src/domain/behavior-budget.ts';
import type { DispatchBody } from '../src/domain/contract.ts';
import { BEHAVIOR_DEFAULTS } from '../src/domain/crawl.ts';
import { behaviorsScript, runBehaviors } from '../src/flow/browser/behaviors.ts';
import { CHROMIUM_PATH, chromiumArgs } from '../src/flow/browser/launch.ts';
import { startFlow, type FlowOptions } from '../src/flow/server.ts';
import { cpuSecondsOf, descendants } from '../test/support/processes.ts';
import { load1Now, round } from './support-figures.ts';
import { dispatchLevel } from '../test/support/flow-dispatch.ts';
import { benchLevel, capturedReport } from './support-flow.ts';
import { pagesArg } from './support-main.ts';
import { pngImage, startSite, type SitePage } from '../test/support/site.ts';

/** The fields every capture bench record may carry: the run's size, and a mode's time, CPU and ratios to bare. */
export interface CaptureRecord {
  pages: number;
  subresourcesPerPage: number;
  hostParallelism: number;
  seconds?: number;
  pagesPerSecond?: number;
  /** CPU seconds of this process and its Chromium (the site server included, as in both modes) */
  cpuSeconds?: number;
  /** the same CPU seconds by kind of process (node, browser, zygote = renderers, gpu-process, ...) */
  cpuByProcess?: Record<string, number>;
  /** the machine's 1-minute load average when the mode started (other work stretches the figures) */
  load1?: number;
  ratio?: number;
  /** bare's CPU seconds / the flow's: the ratio the CPU work alone gives */
  cpuRatio?: number;
  /** the flow against bare Playwright launched with the flow's switches: pages/s and CPU ratios */
  ratioSameSwitches?: number;
  cpuRatioSameSwitches?: number;
}

export const HOSTS = ['h1', 'h2', 'h3', 'h4'];
export const PARALLELISM = 4;
export const SUBRESOURCES = 10;
export const ARGS = ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'];
/** the flow's own switches, less its backstop proxy (bare loads the site directly) */
export const FLOW_SWITCHES = chromiumArgs(0).filter((a) => !a.startsWith('--proxy'));

function hostPages(perHost: number): Record<string, SitePage | string> {
  const pages: Record<string, SitePage | string> = {
    '/a/s.css': { contentType: 'text/css', body: 'body{font:14px sans-serif;color:#222} img{width:32px;height:32px}' },
    '/a/app.js': { contentType: 'text/javascript', body: 'document.getElementById("t").textContent = "built " + location.pathname;' },
  };
  for (let i = 0; i < 8; i++) pages[`/a/i${i}.png`] = { contentType: 'image/png', body: pngImage(32, 32, [i * 30, 100, 200]) };
  const imgs = Array.from({ length: 8 }, (_, i) => `<img src="/a/i${i}.png" alt="">`).join('');
  for (let j = 0; j < perHost; j++)
    pages[`/p${j}`] =
      `<!doctype html><title>page ${j}</title><link rel="stylesheet" href="/a/s.css"><h1>Page ${j}</h1><p id="t"></p>${imgs}<p>${'Some words on the page. '.repeat(40)}</p><a href="/p${(j + 1) % perHost}">next</a><script src="/a/app.js"></script>`;
  return pages;
}

/**
 * CPU seconds the process tree used so far, the finished children its processes reaped included
 * (Chromium's renderers end with their contexts): the work a mode cost, which a busy machine
 * stretches less than it stretches wall time. Counted per kind of process: this process ('node'),
 * Chromium's browser process, and its children by --type (renderers are counted when their zygote
 * reaps them, as 'zygote'). The difference of two readings is that work (cpuSince).
 */
export function treeCpuByKind(): Record<string, number> {
  const out: Record<string, number> = {};
  for (const { pid, args } of [{ pid: process.pid, args: [] as string[] }, ...descendants()]) {
    const seconds = cpuSecondsOf(pid, { reaped: true });
    if (seconds === undefined) continue;
    const cmdline = args.join(' ');
    const type = /--type=([a-z-]+)/.exec(cmdline)?.[1];
    const kind =
      pid === process.pid
        ? 'node'
        : /(^|\/)node$/.test(args[0] ?? '')
          ? 'worker-node'
          : type === undefined
            ? 'browser'
            : type === 'utility'
              ? (/--utility-sub-type=(?:\w+\.)*(\w+)/.exec(cmdline)?.[1] ?? 'utility')
              : type;
    out[kind] = (out[kind] ?? 0) + seconds;
  }
  return out;
}

/** The CPU seconds used since `before` (a treeCpuByKind reading): in total and by kind. */
export function cpuSince(before: Record<string, number>): { cpuSeconds: number; cpuByProcess: Record<string, number> } {
  const now = treeCpuByKind();
  let cpuSeconds = 0;
  const cpuByProcess: Record<string, number> = {};
  for (const k of Object.keys(now)) {
    const d = now[k]! - (before[k] ?? 0);
    cpuSeconds += d;
    if (d >= 0.05) cpuByProcess[k] = Number(d.toFixed(1));
  }
  return { cpuSeconds, cpuByProcess };
}

export interface ModeRun {
  seconds: number;
  cpuSeconds: number;
  cpuByProcess: Record<string, number>;
  load1: number;
}

export async function bareRun(byHost: string[][], args: string[], behaviors = false): Promise<ModeRun> {
  const browser = await chromium.launch({ executablePath: CHROMIUM_PATH, headless: true, args });
  try {
    const load1 = load1Now();
    const cpu0 = treeCpuByKind();
    const started = Date.now();
    await Promise.all(
      byHost.map(async (urls) => {
        for (const url of urls) {
          const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
          if (behaviors) await context.addInitScript({ content: behaviorsScript() });
          const page = await context.newPage();
          await page.goto(url, { waitUntil: 'load' });
          if (behaviors)
            await runBehaviors(
              page,
              BEHAVIOR_DEFAULTS.behaviorsSeconds * 1000,
              { siteSpecific: BEHAVIOR_DEFAULTS.siteBehaviors },
              new AbortController().signal,
            );
          await page.evaluate(() => document.body.innerText.length);
          await context.close();
        }
      }),
    );
    return { seconds: (Date.now() - started) / 1000, ...cpuSince(cpu0), load1 };
  } finally {
    await browser.close();
  }
}

/** Two parts of one mode as one run: times and CPU added, the load of the first part. */
export function sumRuns(a: ModeRun, b: ModeRun): ModeRun {
  const cpuByProcess: Record<string, number> = { ...a.cpuByProcess };
  for (const [k, v] of Object.entries(b.cpuByProcess)) cpuByProcess[k] = Number(((cpuByProcess[k] ?? 0) + v).toFixed(1));
  return { seconds: a.seconds + b.seconds, cpuSeconds: a.cpuSeconds + b.cpuSeconds, cpuByProcess, load1: a.load1 };
}

/** How bare Playwright runs: Chromium's switches, and whether the flow's behaviors run in each page. */
export interface BareVariant {
  args: string[];
  behaviors?: boolean;
}

/**
 * The flow's in-page behaviors: off, as bare Playwright runs none unless a variant asks, or the
 * crawl default. A dispatch without them gets the default (dispatchBehaviors): 10 s of
 * browsertrix-behaviors, which on this site's pages end in about 0.63 s a page.
 */
export const FLOW_BEHAVIORS = {
  off: { seconds: 0, siteSpecific: false },
  on: { seconds: BEHAVIOR_DEFAULTS.behaviorsSeconds, siteSpecific: BEHAVIOR_DEFAULTS.siteBehaviors },
} satisfies Record<string, CaptureBehaviors>;

/** Bare as Playwright launches Chromium (the goals' measure), and with the flow's own switches. */
export const BARE = { playwright: { args: ARGS }, flowSwitches: { args: FLOW_SWITCHES } } satisfies Record<string, BareVariant>;

/** The bench's size from `--pages` (default 200), a multiple of the hosts. */
export const capturePagesArg = (): number => pagesArg(200, HOSTS.length);

/** What every record of a capture bench carries: its name and the run's size. */
export interface BenchBase<B extends string> {
  bench: B;
  pages: number;
  subresourcesPerPage: number;
  hostParallelism: number;
}

export interface CaptureSite {
  /** every page, the hosts taking turns (what the flow is dispatched) */
  interleaved: string[];
  /** what every record of the bench carries: its name and the run's size */
  base<B extends string>(bench: B): BenchBase<B>;
  /**
   * Each bare variant over the first half of each host's pages, then `between` (the flow's runs),
   * then each over the second half, the two halves of a variant summed: the machine's drift over
   * the run (other work, the host's own CPU share) then weighs on bare and the flow alike.
   */
  aroundBare<T>(variants: BareVariant[], between: () => Promise<T>): Promise<{ bare: ModeRun[]; between: T }>;
  close(): Promise<void>;
}

/** The HOSTS site with about `pages` pages, spread evenly over the hosts. */
export async function startCaptureSite(pages: number): Promise<CaptureSite> {
  const perHost = Math.max(1, Math.round(pages / HOSTS.length));
  const site = await startSite({ hosts: Object.fromEntries(HOSTS.map((n) => [n, { pages: hostPages(perHost) }])) });
  const byHost = HOSTS.map((n) => Array.from({ length: perHost }, (_, j) => site.url(n, `/p${j}`)));
  const interleaved: string[] = [];
  for (let j = 0; j < perHost; j++) for (const list of byHost) interleaved.push(list[j]!);
  const half = Math.ceil(perHost / 2);
  const [first, second] = [byHost.map((urls) => urls.slice(0, half)), byHost.map((urls) => urls.slice(half))];
  return {
    interleaved,
    base: (bench) => ({ bench, pages: interleaved.length, subresourcesPerPage: SUBRESOURCES, hostParallelism: PARALLELISM }),
    async aroundBare(variants, between) {
      const before: ModeRun[] = [];
      for (const v of variants) before.push(await bareRun(first, v.args, v.behaviors));
      const result = await between();
      const bare: ModeRun[] = [];
      for (const [i, v] of variants.entries()) bare.push(sumRuns(before[i]!, await bareRun(second, v.args, v.behaviors)));
      return { bare, between: result };
    },
    close: () => site.close(),
  };
}

/** What a capture bench's records are made of: the base each carries, the page count, the bare runs (the variants' order) and what the flow's runs gave. */
export interface CaptureBenchRun<B extends string, T> {
  base: BenchBase<B>;
  total: number;
  bare: ModeRun[];
  flows: T;
}

/**
 * A capture bench from start to end: the site of about `pages` pages, the bare `variants` around
 * `flows` (given every page, the hosts taking turns), the records made of them; the site closed after.
 */
export async function runOnCaptureSite<B extends string, T, R>(
  bench: B,
  pages: number,
  variants: BareVariant[],
  flows: (urls: string[]) => Promise<T>,
  records: (run: CaptureBenchRun<B, T>) => R[],
): Promise<R[]> {
  const site = await startCaptureSite(pages);
  try {
    const { bare, between } = await site.aroundBare(variants, () => flows(site.interleaved));
    return records({ base: site.base(bench), total: site.interleaved.length, bare, flows: between });
  } finally {
    await site.close();
  }
}

/** The records of bare Playwright as it launches Chromium (`bare`) and with the flow's switches (`same`). */
export function bareRecords<B extends string>(base: BenchBase<B>, total: number, bare: ModeRun, same: ModeRun) {
  return [
    { ...base, mode: 'bare' as const, ...runFigures(bare, total) },
    { ...base, mode: 'bare-flow-switches' as const, ...runFigures(same, total) },
  ];
}

export interface BenchFlow {
  /** one level of these pages through the flow, awaited; throws unless every page was captured */
  level(urls: string[], extra?: Partial<DispatchBody>): Promise<ModeRun>;
  close(): Promise<void>;
}

const BENCH_TOKEN = 'bench-token';

/** The flow (receiver and flow worker in this process) with a report receiver that takes every report. */
export async function startBenchFlow(options: (token: string) => FlowOptions): Promise<BenchFlow> {
  const receiver = createServer((req, res) => {
    req.resume();
    req.on('end', () => res.writeHead(202).end('{}'));
  });
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', () => r()));
  const reportUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/r`;
  const flow = await startFlow({ ...options(BENCH_TOKEN), port: 0, reportRetry: { attempts: 1, baseDelayMs: 1 } });
  return {
    async level(urls, extra = {}) {
      const body = benchLevel({
        crawlId: `bench-${Date.now()}`,
        reportUrl,
        hostParallelism: PARALLELISM,
        pages: urls.map((url) => ({ url, follow: false })),
        ...extra,
      });
      const load1 = load1Now();
      const cpu0 = treeCpuByKind();
      const started = Date.now();
      const run = await dispatchLevel(flow, BENCH_TOKEN, body, 3_600_000);
      const seconds = (Date.now() - started) / 1000;
      // read while any capture worker processes live: their CPU is theirs until they are reaped
      const cpu = cpuSince(cpu0);
      capturedReport(run, body);
      return { seconds, ...cpu, load1 };
    },
    async close() {
      await flow.close();
      await new Promise((r) => receiver.close(r));
    },
  };
}

/**
 * Memory of these processes, in bytes, from /proc/<pid>/status (cheap: smaps_rollup's PSS costs
 * the kernel a walk of Chromium's huge address space, more CPU than the flow being measured).
 * `rss` sums every process's RSS, an upper bound that counts the browser binary and shared memory
 * once per process; `unique` sums the private anonymous memory and adds the largest file-backed
 * and shared-memory parts once.
 */
export function memoryOf(pids: number[]): { rss: number; unique: number } {
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

/** A mode's time, rate, CPU and load, rounded as every record prints them. */
export function runFigures(r: ModeRun, pages: number): Pick<CaptureRecord, 'seconds' | 'pagesPerSecond' | 'cpuSeconds' | 'cpuByProcess' | 'load1'> {
  return {
    seconds: round(r.seconds, 2),
    pagesPerSecond: round(pages / r.seconds, 2),
    cpuSeconds: round(r.cpuSeconds, 1),
    cpuByProcess: r.cpuByProcess,
    load1: r.load1,
  };
}

/** The flow against bare Playwright (as Playwright launches Chromium, and with the flow's switches): pages/s and CPU. */
export function ratioFigures(
  flow: ModeRun,
  bare: ModeRun,
  same: ModeRun,
): Pick<CaptureRecord, 'ratio' | 'cpuRatio' | 'ratioSameSwitches' | 'cpuRatioSameSwitches'> {
  return {
    ratio: round(bare.seconds / flow.seconds, 3),
    cpuRatio: round(bare.cpuSeconds / flow.cpuSeconds, 3),
    ratioSameSwitches: round(same.seconds / flow.seconds, 3),
    cpuRatioSameSwitches: round(same.cpuSeconds / flow.cpuSeconds, 3),
  };
}
