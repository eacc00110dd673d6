// What the capture benches share (bench/capture.ts: the capture workers as processes;
// bench/capture-costs.ts: the cost of behaviors and qa): the site, bare Playwright loading it, and
// the CPU the process tree used.
import { loadavg } from 'node:os';
import { chromium } from 'playwright-core';
import { BEHAVIOR_DEFAULTS } from '../src/domain/crawl.ts';
import { behaviorsScript, runBehaviors } from '../src/flow/browser/behaviors.ts';
import { CHROMIUM_PATH, chromiumArgs } from '../src/flow/browser/launch.ts';
import { cpuSecondsOf, descendants } from '../test/support/processes.ts';
import { pngImage, type SitePage } from '../test/support/site.ts';

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

export function hostPages(perHost: number): Record<string, SitePage | string> {
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
    const load1 = loadavg()[0]!;
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
