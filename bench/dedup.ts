// Storage benchmark (issue 26): WACZ bytes stored per page, before and after payload dedup, beside
// the floor — the sum of the distinct payloads the crawl recorded (by WARC-Payload-Digest) — and
// their ratio. Goal: within 1.2× of the floor.
//
// A 4-host local site whose pages all load the same 20 assets (stylesheets, scripts, fonts,
// images; each host serves the same bytes). The reference flow captures it for real (Chromium),
// writing to a store that keeps the bytes in memory so the bench can read the WARCs back:
//   before          every page its own crawl: nothing earlier to refer to, as each page stored
//                   everything before dedup
//   after           one crawl: the first host's first page at depth 0, the rest at depth 1 (the
//                   level reads the payloads depth 0 stored)
//   after-one-level one crawl, every page in one level: the first page of each host starts before
//                   any has finished, so each host's first page stores the assets once more
//
//   node bench/dedup.ts               200 pages (npm run bench runs this size)
//   node bench/dedup.ts --pages 20    10× smaller
//   node bench/dedup.ts --pages 2000  10× larger
//   node bench/dedup.ts --pages 8 --keep /tmp/dedup-wacz   also writes the `after` run's WACZ files there (to validate them by hand)
import { mkdirSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { DispatchBody } from '../src/domain/contract.ts';
import { readWacz } from '../src/domain/wacz/read.ts';
import { parseHttpResponse, parseWarc } from '../src/domain/wacz/warc.ts';
import { startFlow, type Flow } from '../src/flow/server.ts';
import type { ArtifactStore } from '../src/flow/store.ts';
import { pngImage, startSite, ttfFont, type SitePage } from '../test/support/site.ts';
import { benchFlowOptions } from './support-flow.ts';
import { isMain, pagesArg, printAndExit } from './support-main.ts';

export interface DedupBenchResult {
  bench: 'dedup';
  mode: 'before' | 'after' | 'after-one-level' | 'floor' | 'ratio';
  pages: number;
  hosts: number;
  sharedAssets: number;
  /** WACZ bytes stored, in all and per page */
  waczBytes?: number;
  bytesPerPage?: number;
  /** payload bytes written in full (response records), per page: what dedup itself removes */
  payloadBytesPerPage?: number;
  /** response records written in full, and as revisits */
  responses?: number;
  revisits?: number;
  /** the distinct payloads' bytes (the floor), per page */
  floorBytesPerPage?: number;
  /** bytes per page over the floor's */
  ratioBefore?: number;
  ratioAfter?: number;
  ratioAfterOneLevel?: number;
  /** payload bytes written in full over the floor's (1 is each payload stored exactly once) */
  payloadRatioAfter?: number;
  goal?: number;
  ok?: boolean;
  seconds?: number;
}

const HOSTS = ['h1', 'h2', 'h3', 'h4'];
const ASSETS = 20;

/** Deterministic bytes that do not compress away (as minified scripts and fonts mostly do not). */
function noise(seed: number, bytes: number): string {
  let x = seed * 2654435761 + 1;
  let out = '';
  while (out.length < bytes) {
    x = (x * 1103515245 + 12345) >>> 0;
    out += x.toString(36);
  }
  return out.slice(0, bytes);
}

/** 20 shared assets of the sizes a small site serves: 6 stylesheets, 8 scripts, 2 fonts, 4 images. */
function sharedAssets(): Record<string, SitePage> {
  const out: Record<string, SitePage> = {};
  for (let i = 0; i < 6; i++)
    out[`/assets/s${i}.css`] = { contentType: 'text/css', body: `.c${i}{color:#${(i * 37).toString(16).padStart(3, '0')}}/*${noise(i, 6_000 + i * 2_000)}*/` };
  for (let i = 0; i < 8; i++)
    out[`/assets/a${i}.js`] = { contentType: 'text/javascript', body: `var v${i}=${JSON.stringify(noise(100 + i, 10_000 + i * 4_000))};` };
  const font = ttfFont();
  out['/assets/f0.ttf'] = { contentType: 'font/ttf', body: font };
  out['/assets/f1.ttf'] = { contentType: 'font/ttf', body: font.subarray(0, Math.floor(font.length / 2)) };
  for (let i = 0; i < 4; i++) out[`/assets/i${i}.png`] = { contentType: 'image/png', body: pngImage(96 + i * 16, 64, [i * 50, 120, 200]) };
  return out;
}

function hostPages(perHost: number, assets: Record<string, SitePage>): Record<string, SitePage | string> {
  const head = Object.keys(assets)
    .map((p) =>
      p.endsWith('.css')
        ? `<link rel="stylesheet" href="${p}">`
        : p.endsWith('.js')
          ? `<script src="${p}"></script>`
          : p.endsWith('.png')
            ? `<img src="${p}" alt="">`
            : '',
    )
    .join('');
  const fonts = `<style>@font-face{font-family:F0;src:url(/assets/f0.ttf)}@font-face{font-family:F1;src:url(/assets/f1.ttf)}h1{font-family:F0}p{font-family:F1}</style>`;
  const pages: Record<string, SitePage | string> = { ...assets };
  for (let j = 0; j < perHost; j++)
    pages[`/p${j}`] = `<!doctype html><title>page ${j}</title>${fonts}${head}<h1>Page ${j}</h1><p>${noise(10_000 + j, 4_000)}</p>`;
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
    },
  };
}

interface Tally {
  waczBytes: number;
  payloadBytes: number;
  responses: number;
  revisits: number;
  /** payload digest → bytes, over every response and revisit record */
  payloads: Map<string, number>;
}

async function tally(objects: Map<string, Buffer>): Promise<Tally> {
  const t: Tally = { waczBytes: 0, payloadBytes: 0, responses: 0, revisits: 0, payloads: new Map() };
  for (const [key, body] of objects) {
    if (!key.endsWith('.wacz')) continue;
    t.waczBytes += body.length;
    const w = await readWacz(body);
    for (const r of parseWarc(w.entries.get('archive/data.warc')!.data)) {
      const digest = r.headers['WARC-Payload-Digest'];
      if (r.headers['WARC-Type'] === 'response' && digest !== undefined) {
        const bytes = parseHttpResponse(r.block).body.length;
        t.responses += 1;
        t.payloadBytes += bytes;
        t.payloads.set(digest, bytes);
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
  const body: DispatchBody = {
    crawlId,
    depth,
    orgId: 'bench',
    reportUrl,
    formats: ['wacz'],
    signing: false,
    perHostDelayMs: 0,
    hostParallelism: HOSTS.length,
    notBefore: {},
    pages: urls.map((url) => ({ url, follow: false })),
  };
  const res = await fetch(flow.webhookUrl, {
    method: 'POST',
    headers: { authorization: 'Bearer bench-token', 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  if (res.status !== 202) throw new Error(`dispatch answered ${res.status}: ${await res.text()}`);
  const run = await flow.waitForLevel(crawlId, depth, 3_600_000);
  const failed = (run.report?.pages ?? []).filter((p) => p.status !== 'captured');
  if (run.report === undefined || failed.length > 0)
    throw new Error(`level ${crawlId}/${depth}: ${failed.length} pages not captured: ${JSON.stringify(failed[0] ?? run.state)}`);
}

type Mode = 'before' | 'after' | 'after-one-level';

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

export async function run(pages = 200, keep?: string): Promise<DedupBenchResult[]> {
  const perHost = Math.max(1, Math.round(pages / HOSTS.length));
  const assets = sharedAssets();
  const site = await startSite({ hosts: Object.fromEntries(HOSTS.map((n) => [n, { pages: hostPages(perHost, assets) }])) });
  try {
    const urls: string[] = [];
    for (let j = 0; j < perHost; j++) for (const n of HOSTS) urls.push(site.url(n, `/p${j}`));
    const total = urls.length;
    const base = { bench: 'dedup' as const, pages: total, hosts: HOSTS.length, sharedAssets: ASSETS };
    const runs = {
      before: await capture('before', urls),
      after: await capture('after', urls, keep),
      'after-one-level': await capture('after-one-level', urls),
    };
    // the floor: every distinct payload any run recorded, once
    const payloads = new Map([...runs.before.payloads, ...runs.after.payloads]);
    const floor = [...payloads.values()].reduce((a, b) => a + b, 0) / total;
    const per = (t: Tally): number => t.waczBytes / total;
    const ratio = (t: Tally): number => Number((per(t) / floor).toFixed(3));
    const row = (mode: Mode, t: Tally & { seconds: number }): DedupBenchResult => ({
      ...base,
      mode,
      waczBytes: t.waczBytes,
      bytesPerPage: Math.round(per(t)),
      payloadBytesPerPage: Math.round(t.payloadBytes / total),
      responses: t.responses,
      revisits: t.revisits,
      seconds: Number(t.seconds.toFixed(1)),
    });
    return [
      row('before', runs.before),
      row('after', runs.after),
      row('after-one-level', runs['after-one-level']),
      { ...base, mode: 'floor', floorBytesPerPage: Math.round(floor) },
      {
        ...base,
        mode: 'ratio',
        ratioBefore: ratio(runs.before),
        ratioAfter: ratio(runs.after),
        ratioAfterOneLevel: ratio(runs['after-one-level']),
        payloadRatioAfter: Number((runs.after.payloadBytes / total / floor).toFixed(3)),
        goal: 1.2,
        ok: ratio(runs.after) <= 1.2,
      },
    ];
  } finally {
    await site.close();
  }
}

if (isMain(import.meta.url)) {
  const k = process.argv.indexOf('--keep');
  printAndExit(run(pagesArg(200, HOSTS.length), k >= 0 ? process.argv[k + 1] : undefined));
}
