// Storage benchmark (issue 26): WACZ bytes stored per page, before and after payload dedup, beside
// the floor — the sum of the distinct payloads the crawl recorded (by WARC-Payload-Digest), raw,
// as they came over the wire — and their ratio. Goal: within 1.2× of the floor.
// What is compared: bytes in the store (the WACZ files: gzip-compressed WARC records, deflated
// index, pages and datapackage, zip headers) over raw unique payload bytes. Because the WARC is
// gzipped, payloads that compress (HTML, CSS, scripts) count for less than their raw size, so the
// floor row also gives gzipFloorBytesPerPage: each distinct payload gzipped once, on its own.
// The site row gives every shared asset's bytes by content type and a page's HTML bytes, so the
// floor can be judged against what sites serve.
// The breakdown row says where the `after` run's bytes go: WARC records by type (stored, and raw
// WARC header / HTTP header / payload bytes), each other zip entry (stored and raw), zip headers.
//
// Each host of a 4-host local site serves the same shared assets (dedup-sites.ts: `assets` is
// issue 26's site, small pages loading 20 assets; `docs` has 30–60 KB documentation pages like the
// Rust book's). The reference flow captures it for real (Chromium), writing to a store that keeps
// the bytes in memory so the bench can read the WARCs back:
//   before          every page its own crawl: nothing earlier to refer to, as each page stored
//                   everything before dedup
//   after           one crawl: the first host's first page at depth 0, the rest at depth 1 (the
//                   level reads the payloads depth 0 stored)
//   after-one-level one crawl, every page in one level: the first page of each host starts before
//                   any has finished, so each host's first page stores the assets once more
//
//   node bench/dedup.ts               both sites at 200 pages, and docs at 2,000 (npm run bench runs this)
//   node bench/dedup.ts --site assets --pages 20           one site, one size, every mode
//   node bench/dedup.ts --site docs --pages 2000 --modes after
//   node bench/dedup.ts --pages 8 --keep /tmp/dedup-wacz   also writes the `after` run's WACZ files there (to validate them by hand)
import { mkdirSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gzipSync } from 'node:zlib';
import { readWacz } from '../src/domain/wacz/read.ts';
import { parseHttpResponse } from '../src/domain/wacz/warc.ts';
import { startFlow, type Flow } from '../src/flow/server.ts';
import type { ArtifactStore } from '../src/flow/store.ts';
import { startSite, type SitePage } from '../test/support/site.ts';
import { breakdown, perPage, type Breakdown } from './dedup-breakdown.ts';
import { benchSite, type SiteProfile } from './dedup-sites.ts';
import { dispatchLevel } from '../test/support/flow-dispatch.ts';
import { benchFlowOptions, benchLevel, capturedReport } from './support-flow.ts';
import { load1Now, round } from './support-figures.ts';
import { isMain, pagesArg, printAndExit } from './support-main.ts';

export interface DedupBenchResult {
  bench: 'dedup';
  site: SiteProfile;
  mode: 'before' | 'after' | 'after-one-level' | 'site' | 'floor' | 'ratio' | 'breakdown';
  pages: number;
  hosts: number;
  sharedAssets: number;
  /** WACZ bytes stored, in all and per page */
  waczBytes?: number;
  bytesPerPage?: number;
  /** payload bytes written in full (response records, uncompressed), per page: what dedup itself removes */
  payloadBytesPerPage?: number;
  /** response records written in full, and as revisits */
  responses?: number;
  revisits?: number;
  /** the distinct payloads' raw bytes (the floor), per page; and the same payloads each gzipped once */
  floorBytesPerPage?: number;
  gzipFloorBytesPerPage?: number;
  /** what the ratios compare */
  compared?: string;
  /** bytes per page over the floor's */
  ratioBefore?: number;
  ratioAfter?: number;
  ratioAfterOneLevel?: number;
  /** the after run's bytes per page over the gzipped floor's */
  ratioAfterGzipFloor?: number;
  /** payload bytes written in full over the floor's (1 is each payload stored exactly once) */
  payloadRatioAfter?: number;
  goal?: number;
  met?: boolean;
  ok?: boolean;
  /** the one-minute load average when this site's runs started */
  load1?: number;
  seconds?: number;
  /** the after run's bytes, per page, by part */
  perPage?: Breakdown;
  /** what the site serves: each shared asset's bytes by content type, and the first page's HTML */
  assetBytes?: Record<string, number[]>;
  pageHtmlBytes?: number;
}

/** Each shared asset's size, by content type, as the site serves it. */
function assetBytes(assets: Record<string, SitePage>): Record<string, number[]> {
  const out: Record<string, number[]> = {};
  for (const a of Object.values(assets)) (out[a.contentType ?? 'text/html'] ??= []).push(Buffer.byteLength(a.body ?? ''));
  return out;
}

const HOSTS = ['h1', 'h2', 'h3', 'h4'];
type Mode = 'before' | 'after' | 'after-one-level';
const MODES: readonly Mode[] = ['before', 'after', 'after-one-level'];

function hostPages(perHost: number, assets: Record<string, SitePage>, page: (j: number) => string): Record<string, SitePage | string> {
  const pages: Record<string, SitePage | string> = { ...assets };
  for (let j = 0; j < perHost; j++) pages[`/p${j}`] = page(j);
  return pages;
}

/** A store that keeps every object, so the WARCs can be read back. */
function memoryStore(): ArtifactStore & { objects: Map<string, Buffer> } {
  const objects = new Map<string, Buffer>();
  return {
    bucket: 'bench',
    objects,
    async put(key, body) {
      objects.set(key, body);
      return {};
    },
  };
}

interface Tally {
  waczBytes: number;
  payloadBytes: number;
  responses: number;
  revisits: number;
  /** payload digest → payload, over every response record */
  payloads: Map<string, Buffer>;
  waczs: Buffer[];
}

async function tally(objects: Map<string, Buffer>): Promise<Tally> {
  const t: Tally = { waczBytes: 0, payloadBytes: 0, responses: 0, revisits: 0, payloads: new Map(), waczs: [] };
  for (const [key, body] of objects) {
    if (!key.endsWith('.wacz')) continue;
    t.waczBytes += body.length;
    t.waczs.push(body);
    for (const r of (await readWacz(body)).records) {
      const digest = r.headers['WARC-Payload-Digest'];
      if (r.headers['WARC-Type'] === 'response' && digest !== undefined) {
        const payload = parseHttpResponse(r.block).body;
        t.responses += 1;
        t.payloadBytes += payload.length;
        t.payloads.set(digest, payload);
      } else if (r.headers['WARC-Type'] === 'revisit') t.revisits += 1;
    }
  }
  return t;
}
async function withFlow<T>(fn: (flow: Flow, reportUrl: string, store: ReturnType<typeof memoryStore>) => Promise<T>): Promise<T> {
  const receiver = createServer((req, res) => {
    req.resume();
    req.on('end', () => res.writeHead(202).end('{}'));
  });
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', () => r()));
  const store = memoryStore();
  const token = 'bench-token';
  const flow = await startFlow({ ...benchFlowOptions(token, store), port: 0, reportRetry: { attempts: 1, baseDelayMs: 1 } });
  try {
    return await fn(flow, `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/r`, store);
  } finally {
    await flow.close();
    await new Promise((r) => receiver.close(r));
  }
}

async function level(flow: Flow, reportUrl: string, crawlId: string, depth: number, urls: string[]): Promise<void> {
  const body = benchLevel({ crawlId, depth, reportUrl, hostParallelism: HOSTS.length, pages: urls.map((url) => ({ url, follow: false })) });
  capturedReport(await dispatchLevel(flow, 'bench-token', body, 3_600_000), body);
}

async function capture(mode: Mode, urls: string[], keep?: string): Promise<Tally & { seconds: number }> {
  const started = Date.now();
  const t = await withFlow(async (flow, reportUrl, store) => {
    const tag = `bench-dedup-${mode}-${Date.now()}`;
    if (mode === 'before') {
      // one page a crawl, HOSTS.length at once
      for (let i = 0; i < urls.length; i += HOSTS.length)
        await Promise.all(urls.slice(i, i + HOSTS.length).map((u, j) => level(flow, reportUrl, `${tag}-${i + j}`, 0, [u])));
    } else if (mode === 'after') {
      await level(flow, reportUrl, tag, 0, urls.slice(0, 1));
      await level(flow, reportUrl, tag, 1, urls.slice(1));
    } else await level(flow, reportUrl, tag, 0, urls);
    if (keep !== undefined && mode === 'after') {
      mkdirSync(keep, { recursive: true });
      for (const [key, body] of store.objects) if (key.endsWith('.wacz')) writeFileSync(`${keep}/${key.replaceAll('/', '_')}`, body);
    }
    return tally(store.objects);
  });
  return { ...t, seconds: (Date.now() - started) / 1000 };
}

interface SiteRun {
  site: SiteProfile;
  pages: number;
  sharedAssets: number;
  assetBytes: Record<string, number[]>;
  pageHtmlBytes: number;
  load1: number;
  runs: Partial<Record<Mode, Tally & { seconds: number }>>;
}

async function crawlSite(profile: SiteProfile, pages: number, modes: readonly Mode[], keep?: string): Promise<SiteRun> {
  const load1 = load1Now();
  const perHost = Math.max(1, Math.round(pages / HOSTS.length));
  const { assets, page } = benchSite(profile);
  const site = await startSite({ hosts: Object.fromEntries(HOSTS.map((n, h) => [n, { pages: hostPages(perHost, assets, (j) => page(j, h)) }])) });
  try {
    const urls: string[] = [];
    for (let j = 0; j < perHost; j++) for (const n of HOSTS) urls.push(site.url(n, `/p${j}`));
    const runs: SiteRun['runs'] = {};
    for (const mode of modes) runs[mode] = await capture(mode, urls, keep);
    const sizes = { assetBytes: assetBytes(assets), pageHtmlBytes: Buffer.byteLength(page(0, 0)) };
    return { site: profile, pages: urls.length, sharedAssets: Object.keys(assets).length, ...sizes, load1, runs };
  } finally {
    await site.close();
  }
}

/** The floor: every distinct payload any run recorded, once — raw, and each gzipped on its own. */
function floors(r: SiteRun): { raw: number; gzip: number } {
  const payloads = new Map(Object.values(r.runs).flatMap((t) => [...t.payloads]));
  let raw = 0;
  let gzip = 0;
  for (const p of payloads.values()) {
    raw += p.length;
    gzip += gzipSync(p, { level: 9 }).length;
  }
  return { raw: raw / r.pages, gzip: gzip / r.pages };
}

async function rows(r: SiteRun): Promise<DedupBenchResult[]> {
  const base = { bench: 'dedup' as const, site: r.site, pages: r.pages, hosts: HOSTS.length, sharedAssets: r.sharedAssets, load1: r.load1 };
  const floor = floors(r);
  const per = (t: Tally): number => t.waczBytes / r.pages;
  const ratio = (t: Tally | undefined, of = floor.raw): number | undefined => (t === undefined ? undefined : round(per(t) / of, 3));
  const measured = MODES.flatMap((mode) => {
    const t = r.runs[mode];
    if (t === undefined) return [];
    const row: DedupBenchResult = {
      ...base,
      mode,
      waczBytes: t.waczBytes,
      bytesPerPage: Math.round(per(t)),
      payloadBytesPerPage: Math.round(t.payloadBytes / r.pages),
    };
    return [{ ...row, responses: t.responses, revisits: t.revisits, seconds: Number(t.seconds.toFixed(1)) }];
  });
  const after = r.runs.after;
  const ratioAfter = ratio(after);
  const summary: DedupBenchResult = {
    ...base,
    mode: 'ratio',
    compared: 'WACZ bytes in the store per page / raw unique payload bytes per page',
    ...(r.runs.before !== undefined ? { ratioBefore: ratio(r.runs.before) } : {}),
    ...(ratioAfter !== undefined ? { ratioAfter, ratioAfterGzipFloor: ratio(after, floor.gzip) } : {}),
    ...(r.runs['after-one-level'] !== undefined ? { ratioAfterOneLevel: ratio(r.runs['after-one-level']) } : {}),
    ...(after !== undefined ? { payloadRatioAfter: round(after.payloadBytes / r.pages / floor.raw, 3) } : {}),
    goal: 1.2,
    ...(ratioAfter !== undefined ? { met: ratioAfter <= 1.2 } : {}),
  };
  const parts = after === undefined ? [] : [{ ...base, mode: 'breakdown' as const, perPage: perPage(await breakdown(after.waczs), r.pages) }];
  const site: DedupBenchResult = { ...base, mode: 'site', assetBytes: r.assetBytes, pageHtmlBytes: r.pageHtmlBytes };
  return [
    ...measured,
    site,
    { ...base, mode: 'floor', floorBytesPerPage: Math.round(floor.raw), gzipFloorBytesPerPage: Math.round(floor.gzip) },
    summary,
    ...parts,
  ];
}

export interface DedupBenchOptions {
  site: SiteProfile;
  pages: number;
  modes?: readonly Mode[];
  keep?: string;
}

/** One site at one size: every mode asked for, the floor, the ratios, the after run's breakdown. */
export async function runSite(o: DedupBenchOptions): Promise<DedupBenchResult[]> {
  return rows(await crawlSite(o.site, o.pages, o.modes ?? MODES, o.keep));
}

/** What `npm run bench` prints: issue 26's site and the documentation site at 200 pages, the documentation site at 2,000 (after only). */
export async function run(): Promise<DedupBenchResult[]> {
  return [
    ...(await runSite({ site: 'assets', pages: 200 })),
    ...(await runSite({ site: 'docs', pages: 200 })),
    ...(await runSite({ site: 'docs', pages: 2000, modes: ['after'] })),
  ];
}

function arg(name: string): string | undefined {
  const i = process.argv.indexOf(name);
  return i >= 0 ? process.argv[i + 1] : undefined;
}

if (isMain(import.meta.url)) {
  const site = arg('--site');
  const modes = arg('--modes')?.split(',') as Mode[] | undefined;
  const keep = arg('--keep');
  if (site === undefined && arg('--pages') === undefined) printAndExit(run());
  else
    printAndExit(
      runSite({
        site: site === 'docs' ? 'docs' : 'assets',
        pages: pagesArg(200, HOSTS.length),
        ...(modes ? { modes } : {}),
        ...(keep !== undefined ? { keep } : {}),
      }),
    );
}
