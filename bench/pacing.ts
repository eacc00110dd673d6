// Pacing benchmark: how close the capture flow's makespan comes to the politeness lower bound.
//
// A 4-host test site (12, 9, 6 and 3 pages), each capture held for a time (calibrated, below) by
// the flow's captureDelayMs knob. One level is dispatched to the real flow over HTTP; the makespan (first
// submit → last finish, from the report) is divided by the politeness lower bound computed from
// the measured capture durations (per host: its captures back to back with exactly the delay
// between them; and all capture time over hostParallelism slots). Gap violations are counted
// twice: in the reported timestamps (the spec's pacing query) and as the site felt them.
//
// The hold is calibrated, not fixed: that bound can be met by some schedule only when a capture
// lasts between the delay and about twice it. Shorter, one slot must idle: the 12-page host has
// 11 gaps of at least the delay to fill with the other 18 pages, and one capture shorter than the
// delay leaves part of a gap idle, so at least 11 − (18 − 11) = 4 gaps idle (the simulated rows at
// one slot and 200 or 280 ms show the Pacer at exactly that loss). Longer than about 600 ms, two
// slots cannot keep the 12-page host busy and fit the rest (the simulated rows at 650–1300 ms).
// Chromium's own part of a capture moves 2–3× between machines (175–335 ms here, 480–560 ms on
// another) and with the captures at once, so a fixed hold lands one machine or parallelism or
// another outside that window. Before each measured level, a level without a hold at the same
// parallelism (`calibration`) measures it, and the measured level holds each capture for what
// brings it to CAPTURE_TARGET_MS.
// Goal (issue 25): ratio ≤ 1.01 at hostParallelism 1, 2 and 4, with zero violations. The mean of
// (gap − delay) per host says how much of the excess is the hand-over between captures. The
// simulated rows with handoverMs say what the slot lead (a capture handed over behind one in
// flight, on its worker) buys when each hand-over through Temporal costs that much. Artifacts go to an in-memory store: uploads happen
// after a capture finishes, off the host's clock, so S3 would change nothing measured here.
//
//   node bench/pacing.ts                    (or via npm run bench, which calls run())
//   node bench/pacing.ts --parallelism 2    the flow at hostParallelism 2 only (and the simulations)
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import type { DispatchBody } from '../src/domain/contract.ts';
import { pacingViolations, politenessLowerBound, simulatePacing, type Capture, type SimPage } from '../src/domain/pacing.ts';
import { startFlow, type Flow } from '../src/flow/server.ts';
import { dispatchLevel } from '../test/support/flow-dispatch.ts';
import { benchFlowOptions, benchLevel, capturedReport } from './support-flow.ts';
import { memoryStore } from '../src/flow/store.ts';
import { startSite, type Site } from '../test/support/site.ts';
import { load1Now } from './support-figures.ts';
import { uniform } from './support-random.ts';

export interface PacingBenchResult {
  bench: 'pacing';
  mode: 'flow' | 'simulated';
  hosts: number;
  pages: number;
  /** the hold (captureDelayMs) each capture was given, ms; simulated: each capture's duration */
  captureMs: number;
  /** flow: the median capture duration the bound was computed with (Chromium's part and the hold) */
  medianCaptureMs?: number;
  perHostDelayMs: number;
  hostParallelism: number;
  makespanMs: number;
  lowerBoundMs: number;
  ratio: number;
  goal: number;
  gapViolations: number;
  siteGapViolations?: number;
  /** mean over consecutive captures on a host of (submit − previous finish − delay) */
  meanGapOverDelayMs?: number;
  /** simulated: what each hand-over through Temporal costs, and whether captures go behind others (slot lead) */
  handoverMs?: number;
  slotLead?: boolean;
  /** simulated with durations drawn uniformly within ±spread of captureMs: ratio is the median draw's, ratioP90 the 90th percentile's */
  spread?: number;
  draws?: number;
  ratioP90?: number;
  /** flow: the one-minute load average when the level started */
  load1?: number;
  ok: boolean;
}

/** A level without a hold at the parallelism about to be measured: what the flow's captures take on
 * this machine there (chromiumMs, the median), and so the hold the measured level gives each. Its
 * own ratio is printed, not judged: without a hold its captures may fall where no schedule meets
 * the bound (one slot, captures shorter than the delay). */
export interface PacingCalibration {
  bench: 'pacing';
  mode: 'calibration';
  hostParallelism: number;
  perHostDelayMs: number;
  chromiumMs: number;
  targetMs: number;
  holdMs: number;
  ratioWithoutHold: number;
  /** the one-minute load average when the level without a hold started */
  load1: number;
}

const PAGES_PER_HOST = [12, 9, 6, 3];
const GOAL = 1.01;
const DELAY_MS = 300;
/** Where the bound can be met at one, two and four slots over these hosts: as far above the delay
 * (1.4×) as under the 600 ms where two slots stop meeting it. */
const CAPTURE_TARGET_MS = 420;

const HOST_NAMES = ['h1', 'h2', 'h3', 'h4'];

/** The 4-host test site: host i has PAGES_PER_HOST[i] pages, /p0, /p1, … */
async function startPacingSite(): Promise<Site> {
  return startSite({
    hosts: Object.fromEntries(
      HOST_NAMES.map((n, i) => [
        n,
        { pages: Object.fromEntries(Array.from({ length: PAGES_PER_HOST[i]! }, (_, j) => [`/p${j}`, `<title>${n} ${j}</title><p>page ${j}</p>`])) },
      ]),
    ),
  });
}

/** Where the flow sends its report: each one accepted and dropped (the bench reads the level's from the flow). */
async function startReceiver(): Promise<Server> {
  const receiver = createServer((req, res) => {
    req.resume();
    req.on('end', () => res.writeHead(202).end('{}'));
  });
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', () => r()));
  return receiver;
}

/** The level's pages: every page of the site, none followed. */
function sitePages(site: Site): DispatchBody['pages'] {
  // interleave hosts in the dispatch, as a level of discovered links would be
  const pages: DispatchBody['pages'] = [];
  for (let j = 0; j < Math.max(...PAGES_PER_HOST); j++)
    HOST_NAMES.forEach((n, i) => j < PAGES_PER_HOST[i]! && pages.push({ url: site.url(n, `/p${j}`), follow: false }));
  return pages;
}

/** The bench's level (benchLevel) over `pages`, paced as asked and with no in-page behaviors. */
function levelDispatch(crawlId: string, reportUrl: string, perHostDelayMs: number, hostParallelism: number, pages: DispatchBody['pages']): DispatchBody {
  return benchLevel({
    crawlId,
    reportUrl,
    perHostDelayMs,
    hostParallelism,
    // no in-page behaviors: they hold every capture ≥ 1 s (behavior-budget.ts), and this bench's
    // captures are meant to take captureMs
    behaviors: { seconds: 0, siteSpecific: false },
    pages,
  });
}

/** The level dispatched to the flow over HTTP, and its captures (host, submit, finish) once it is done. */
async function captureLevel(flow: Flow, token: string, body: DispatchBody): Promise<Capture[]> {
  const report = capturedReport(await dispatchLevel(flow, token, body, 120_000), body);
  return report.pages.map((p) => ({ host: new URL(p.url).host, start: Date.parse(p.submittedAt!), finish: Date.parse(p.finishedAt!) }));
}

/** The flow's record of a level: its makespan against the bound from the measured durations, and
 * the gap violations in the report and as the site felt them. */
function flowResult(body: DispatchBody, captures: Capture[], site: Site, captureMs: number, load1: number): PacingBenchResult {
  const { perHostDelayMs, hostParallelism } = body;
  const t0 = Math.min(...captures.map((c) => c.start));
  const makespan = Math.max(...captures.map((c) => c.finish)) - t0;
  const measured: SimPage[] = captures.map((c) => ({ host: c.host, durationMs: c.finish - c.start }));
  const lb = politenessLowerBound(measured, { perHostDelayMs, hostParallelism }, t0) - t0;
  const gapViolations = pacingViolations(captures, { perHostDelayMs, hostParallelism }).length;
  const siteGapViolations = HOST_NAMES.flatMap((n) => site.gaps(n)).filter((g) => g.gapMs < perHostDelayMs).length;
  const ratio = makespan / lb;
  const over = gapsOverDelay(captures, perHostDelayMs);
  const durations = measured.map((m) => m.durationMs).sort((a, b) => a - b);
  const meanGapOverDelayMs = over.length === 0 ? 0 : Number((over.reduce((a, b) => a + b, 0) / over.length).toFixed(1));
  return {
    bench: 'pacing',
    mode: 'flow',
    hosts: HOST_NAMES.length,
    pages: body.pages.length,
    captureMs,
    medianCaptureMs: durations[Math.floor(durations.length / 2)]!,
    perHostDelayMs,
    hostParallelism,
    makespanMs: makespan,
    lowerBoundMs: Math.round(lb),
    ratio: Number(ratio.toFixed(4)),
    goal: GOAL,
    gapViolations,
    siteGapViolations,
    meanGapOverDelayMs,
    load1,
    ok: ratio <= GOAL && gapViolations === 0 && siteGapViolations === 0,
  };
}

async function flowRun(captureMs: number, perHostDelayMs: number, hostParallelism: number): Promise<PacingBenchResult> {
  const load1 = load1Now();
  const site = await startPacingSite();
  const receiver = await startReceiver();
  const token = 'bench-token';
  const flow = await startFlow({
    ...benchFlowOptions(token, memoryStore('bench')),
    port: 0,
    knobs: { captureDelayMs: captureMs },
    reportRetry: { attempts: 1, baseDelayMs: 1 },
  });
  try {
    const pages = sitePages(site);
    const reportUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/r`;
    const body = levelDispatch(`bench-${Date.now()}`, reportUrl, perHostDelayMs, hostParallelism, pages);
    const captures = await captureLevel(flow, token, body);
    return flowResult(body, captures, site, captureMs, load1);
  } finally {
    await flow.close();
    await site.close();
    await new Promise((r) => receiver.close(r));
  }
}

function gapsOverDelay(captures: { host: string; start: number; finish: number }[], delayMs: number): number[] {
  const out: number[] = [];
  for (const host of new Set(captures.map((c) => c.host))) {
    const mine = captures.filter((c) => c.host === host).sort((a, b) => a.start - b.start);
    for (let i = 1; i < mine.length; i++) out.push(mine[i]!.start - mine[i - 1]!.finish - delayMs);
  }
  return out;
}

/** The site's pages in the order the level lists them, each lasting what `durationMs` says. */
function simPages(durationMs: () => number): SimPage[] {
  const pages: SimPage[] = [];
  for (let j = 0; j < Math.max(...PAGES_PER_HOST); j++) PAGES_PER_HOST.forEach((n, i) => j < n && pages.push({ host: `h${i + 1}`, durationMs: durationMs() }));
  return pages;
}

function simulatedRun(
  captureMs: number,
  perHostDelayMs: number,
  hostParallelism: number,
  handoverMs = 0,
  slotLead = false,
  pages = simPages(() => captureMs),
): PacingBenchResult {
  const opts = { perHostDelayMs, hostParallelism };
  // handed over as the slice hands a capture over: up to its host's delay early, at most 1 s
  // (MAX_CAPTURE_LEAD_MS in src/flow/workflows/slice.ts)
  const r = simulatePacing(pages, opts, 0, Math.min(1000, perHostDelayMs), handoverMs, slotLead);
  // from the first submit, as the flow's runs are measured
  const t0 = Math.min(...r.map((x) => x.start));
  const makespan = Math.max(...r.map((x) => x.finish)) - t0;
  const lb = politenessLowerBound(pages, opts, t0) - t0;
  const gapViolations = pacingViolations(r, opts).length;
  const ratio = makespan / lb;
  return {
    bench: 'pacing',
    mode: 'simulated',
    hosts: PAGES_PER_HOST.length,
    pages: pages.length,
    captureMs,
    perHostDelayMs,
    hostParallelism,
    makespanMs: makespan,
    lowerBoundMs: lb,
    ratio: Number(ratio.toFixed(4)),
    goal: GOAL,
    gapViolations,
    ...(handoverMs > 0 ? { handoverMs, slotLead } : {}),
    ok: ratio <= GOAL && gapViolations === 0,
  };
}

/**
 * Durations that vary as real captures do (the flow's move by 10–20% from page to page): `draws`
 * levels, each page's duration drawn within ±spread of captureMs (a seeded generator, so every run
 * draws the same), no hand-over cost. The Pacer estimates each host's duration from its finished
 * captures, as in the flow, so this is what the choice of host alone costs when durations vary.
 */
function spreadRun(captureMs: number, perHostDelayMs: number, spread: number, hostParallelism: number, draws = 200): PacingBenchResult {
  const next = uniform(7);
  const runs = Array.from({ length: draws }, () =>
    simulatedRun(
      captureMs,
      perHostDelayMs,
      hostParallelism,
      0,
      false,
      simPages(() => Math.round(captureMs * (1 + spread * (2 * next() - 1)))),
    ),
  );
  runs.sort((a, b) => a.ratio - b.ratio);
  const median = runs[Math.floor(draws / 2)]!;
  const p90 = runs[Math.floor(draws * 0.9)]!;
  return {
    ...median,
    spread,
    draws,
    ratioP90: p90.ratio,
    gapViolations: runs.reduce((n, r) => n + r.gapViolations, 0),
    ok: median.ratio <= GOAL && p90.ratio <= GOAL,
  };
}

export async function run(flowParallelism: readonly number[] = [4, 2, 1]): Promise<(PacingBenchResult | PacingCalibration)[]> {
  // bench/run.ts prints the returned records as JSON lines (so does the direct run below)
  const results: (PacingBenchResult | PacingCalibration)[] = [];
  const emit = (r: PacingBenchResult | PacingCalibration): void => {
    results.push(r);
  };
  for (const [c, d, p] of [
    [100, 300, 4],
    [100, 300, 2],
    [100, 300, 1],
    [300, 100, 1],
    // one slot, captures shorter than the delay but longer than half of it: no schedule meets the
    // bound (the opening comment's count of idle gaps), and the Pacer's loss is that count's
    [200, 300, 1],
    [280, 300, 1],
    // captures longer than the delay with fewer slots than hosts: where the choice of host matters
    [500, 300, 2],
    // from about 650 ms at two slots the choice itself ends above the bound, before any hand-over
    [650, 300, 2],
    [800, 300, 2],
    [1300, 300, 2],
  ] as const)
    emit(simulatedRun(c, d, p));
  // durations that vary, around what the measured levels' captures take, and around 600 ms (where a
  // hold of 100 ms put them on a machine whose Chromium took 480–560 ms)
  for (const around of [CAPTURE_TARGET_MS, 600]) for (const spread of [0.1, 0.2]) emit(spreadRun(around, DELAY_MS, spread, 2));
  // what the slot lead is for: with an 80 ms hand-over through Temporal (signal, workflow task,
  // activity dispatch, as measured on a loaded machine), one slot over four hosts (the flow leads
  // only a slice of one slot: with durations that vary it made two slots worse)
  for (const lead of [false, true]) emit(simulatedRun(100, 300, 1, 80, lead));
  emit(simulatedRun(100, 300, 2, 80, false));
  // a process's first level runs cold (Chromium's first renderers, code not yet compiled): its first
  // captures took 700–750 ms where later ones took 300–450, so one is run first and not counted
  await flowRun(0, DELAY_MS, 4);
  for (const p of flowParallelism) {
    const calibration = await calibrate(p);
    emit(calibration);
    emit(await flowRun(calibration.holdMs, DELAY_MS, p));
  }
  return results;
}

/** What the flow's captures take on this machine without a hold, at the parallelism to be measured
 * (captures at once share the cores: 320–335 ms a capture at four, 185–195 at one, on this
 * 2-core machine), and so the hold that brings them to CAPTURE_TARGET_MS. */
async function calibrate(hostParallelism: number): Promise<PacingCalibration> {
  const probe = await flowRun(0, DELAY_MS, hostParallelism);
  const chromiumMs = probe.medianCaptureMs!;
  return {
    bench: 'pacing',
    mode: 'calibration',
    hostParallelism,
    perHostDelayMs: DELAY_MS,
    chromiumMs,
    targetMs: CAPTURE_TARGET_MS,
    holdMs: Math.max(0, CAPTURE_TARGET_MS - chromiumMs),
    ratioWithoutHold: probe.ratio,
    load1: probe.load1!,
  };
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) {
  const i = process.argv.indexOf('--parallelism');
  const only = i >= 0 ? (process.argv[i + 1] ?? '').split(',').map(Number) : undefined;
  if (only !== undefined && !only.every((p) => Number.isInteger(p) && p >= 1)) {
    console.error('--parallelism takes whole numbers ≥ 1, comma-separated (e.g. 4,2,1)');
    process.exit(2);
  }
  run(only).then(
    (rs) => {
      for (const r of rs) console.log(JSON.stringify(r));
      process.exit(rs.every((r) => r.mode === 'calibration' || r.ok) ? 0 : 1);
    },
    (err: unknown) => {
      console.error(err);
      process.exit(1);
    },
  );
}
