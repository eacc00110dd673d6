// harness: not used because it tests the capture flow's browser alone (the flow, test sites, S3, the replay server), with no ledger.
// The reference flow captures with a real browser (Debian's chromium through playwright-core),
// against a real test site and the real SeaweedFS: everything a page loads is in its WACZ, the
// WACZ replays in the project's replay in Chromium, links and text come from the rendered page,
// every format is produced and decodes, and the bounds hold (deadline, budget, cookies, pop-ups).
import { createServer as createHttpServer } from 'node:http';
import { createServer as createNetServer, type AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { chromium, type Browser, type BrowserContext } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAddressPolicy, parseAllowlist } from '../../src/domain/address-policy.ts';
import { ERROR_TYPE_CANCELLED } from '../../src/domain/contract.ts';
import type { DispatchBody, LevelReportBody, LinksArtifact, Manifest, PageReport } from '../../src/domain/contract.ts';
import { selectLinks } from '../../src/domain/links.ts';
import { MAX_PAGE_TEXT_BYTES } from '../../src/domain/page-text.ts';
import { readWacz, waczProblems } from '../../src/domain/wacz/read.ts';
import { WARC_PATH } from '../../src/domain/wacz/write.ts';
import { surt } from '../../src/domain/wacz/surt.ts';
import { parseHttpResponse } from '../../src/domain/wacz/warc.ts';
import { CaptureBrowser, CHROMIUM_PATH } from '../../src/flow/browser/launch.ts';
import { breakAnywherePastCap } from '../../src/flow/browser/layout-guard.ts';
import { ERROR_TYPES, packageCapture, visitPage } from '../../src/flow/capture.ts';
import { createGuardedFetcher } from '../../src/flow/fetch.ts';
import { CAPTURE_USER_AGENT } from '../../src/flow/version.ts';
import { replayLink } from '../../src/api/picker.ts';
import { createUrlSigner } from '../../src/api/presign.ts';
import { buildReplayServer } from '../../src/replay/server.ts';
import { TEST_SITES_ALLOW } from '../support/config.ts';
import { chromiumBrowsers, descendants, lastSwitch, type ProcessInfo } from '../support/processes.ts';
import { startFlowAlone, type FlowAlone } from '../support/flow-alone.ts';
import { dispatchTo } from '../support/report-receiver.ts';
import { realisticAssets, realisticPage, startSite, type Site } from '../support/site.ts';
import { readWithWarcio, warcFieldsOf } from '../support/warcio.ts';

const TOKEN = 'browser-capture-test-token';
const ALL_FORMATS = ['wacz', 'html', 'png', 'webp', 'mhtml', 'links'] as const;

let alone: FlowAlone;
let viewer: Browser;
const sites: Site[] = [];

beforeAll(async () => {
  // how the report authenticates is flow.test.ts's subject; the receiver here takes any
  alone = await startFlowAlone(TOKEN);
  viewer = await chromium.launch({
    executablePath: CHROMIUM_PATH,
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
});

afterAll(async () => {
  await viewer?.close();
  await alone?.close();
  await Promise.all(sites.map((s) => s.close()));
});

/** A TCP listener on 127.0.0.1 (which the policy refuses) counting connections: any at all is an escape. */
async function countingListener(): Promise<{ target: string; readonly connections: number; close(): Promise<void> }> {
  let connections = 0;
  const listener = createNetServer((sock) => {
    connections++;
    sock.destroy();
  });
  await new Promise<void>((r) => listener.listen(0, '127.0.0.1', () => r()));
  return {
    target: `127.0.0.1:${(listener.address() as AddressInfo).port}`,
    get connections() {
      return connections;
    },
    close: () => new Promise<void>((r) => listener.close(() => r())),
  };
}

/** Runs `test` with a counting listener (what a page must never reach) at `target`, closed after it. */
async function withListener(test: (listener: Awaited<ReturnType<typeof countingListener>>, target: string) => Promise<void>): Promise<void> {
  const listener = await countingListener();
  try {
    await test(listener, listener.target);
  } finally {
    await listener.close();
  }
}

async function site(hosts: Parameters<typeof startSite>[0]['hosts']): Promise<Site> {
  const s = await startSite({ hosts });
  sites.push(s);
  return s;
}

function dispatchBody(over: Partial<DispatchBody> & Pick<DispatchBody, 'pages'>): DispatchBody {
  return dispatchTo(alone.receiver.url, { perHostDelayMs: 0, ...over });
}

async function runLevel(body: DispatchBody, query = ''): Promise<LevelReportBody> {
  const run = await alone.dispatch(body, 90_000, query);
  expect(run.state).toBe('reported');
  return run.report!;
}

async function manifestOf(p: PageReport | undefined): Promise<Manifest> {
  expect(p?.manifestKey).toBeDefined();
  return JSON.parse((await alone.getObject(p!.manifestKey!)).toString('utf8')) as Manifest;
}

async function artifact(m: Manifest, format: string): Promise<Buffer> {
  const a = m.artifacts.find((x) => x.format === format);
  expect(a, `artifact ${format}`).toBeDefined();
  return alone.getObject(a!.key);
}

describe('a page built like a real site', { timeout: 180_000 }, () => {
  let s: Site;
  let report: LevelReportBody;
  let manifest: Manifest;
  const TEXT = 'This paragraph was written by the page script.';

  beforeAll(async () => {
    s = await site({
      a: {
        pages: {
          ...realisticAssets(),
          '/': realisticPage({ title: 'Book home', scriptLinks: ['/chapter/1', '/chapter/2', '/chapter/3#part'], scriptText: TEXT, staticLinks: ['/about'] }),
          '/chapter/1': realisticPage({ title: 'Chapter 1', scriptLinks: ['/'], scriptText: 'one' }),
          '/chapter/2': realisticPage({ title: 'Chapter 2', scriptLinks: ['/'], scriptText: 'two' }),
          '/chapter/3': realisticPage({ title: 'Chapter 3', scriptLinks: ['/'], scriptText: 'three' }),
          '/about': realisticPage({ title: 'About', scriptLinks: [], scriptText: 'about' }),
        },
      },
    });
    report = await runLevel(dispatchBody({ formats: [...ALL_FORMATS], pages: [{ url: s.url('a', '/'), follow: true }] }));
    expect(report.pages[0]!.status).toBe('captured');
    manifest = await manifestOf(report.pages[0]);
  });

  it('records the document, stylesheet, image, font, script and fetch() in the WACZ, all indexed', async () => {
    const w = await readWacz(await artifact(manifest, 'wacz'));
    expect(waczProblems(w)).toEqual([]);
    const want = ['/', '/assets/site.css', '/assets/logo.png', '/assets/mono.ttf', '/assets/app.js', '/assets/data.json'].map((p) => s.url('a', p));
    expect(w.cdx.map((e) => e.url).sort()).toEqual([...want].sort());
    const responses = w.records.filter((r) => r.headers['WARC-Type'] === 'response');
    expect(responses.map((r) => r.headers['WARC-Target-URI']).sort()).toEqual([...want].sort());
    // the bytes recorded are the bytes served
    const font = responses.find((r) => r.headers['WARC-Target-URI'] === s.url('a', '/assets/mono.ttf'))!;
    expect(parseHttpResponse(font.block).body.equals(realisticAssets()['/assets/mono.ttf']!.body as Buffer)).toBe(true);
    expect(w.records.filter((r) => r.headers['WARC-Type'] === 'request')).toHaveLength(want.length);
  });

  it('warcio reads the warcinfo (software, user agent) and WARC-IP-Address, the connected address, on every response', async () => {
    const w = await readWacz(await artifact(manifest, 'wacz'));
    const records = await readWithWarcio(w.entries.get(WARC_PATH)!.data);
    expect(records[0]!.type).toBe('warcinfo');
    const info = new Map(warcFieldsOf(records[0]!.content));
    expect(info.get('software')).toBe(manifest.software);
    expect(info.get('http-header-user-agent')).toBe(CAPTURE_USER_AGENT);
    const responses = records.filter((r) => r.type === 'response');
    expect(responses).toHaveLength(6);
    expect(new Set(responses.map((r) => r.header('WARC-IP-Address')))).toEqual(new Set([new URL(s.url('a', '/')).hostname]));
  });

  it('indexes under canonical SURT keys: the IP host reversed, as pywb looks them up', async () => {
    const w = await readWacz(await artifact(manifest, 'wacz'));
    const lines = w.entries.get('indexes/index.cdx')!.data.toString('utf8').trim().split('\n');
    const reversed = new URL(s.url('a', '/')).host.replace(/^[\d.]+/, (ip) => ip.split('.').reverse().join(','));
    expect(lines).toHaveLength(6);
    for (const line of lines) {
      const key = line.slice(0, line.indexOf(' '));
      const { url } = JSON.parse(line.slice(line.indexOf('{'))) as { url: string };
      expect(key).toBe(surt(url));
      expect(key.startsWith(`${reversed})/`)).toBe(true);
    }
  });

  it('pages.jsonl has the title and exactly the rendered document.body.innerText', async () => {
    const w = await readWacz(await artifact(manifest, 'wacz'));
    const live = await viewer.newPage();
    await live.goto(s.url('a', '/'), { waitUntil: 'load' });
    await live.locator('#xhr', { hasText: 'loaded by fetch' }).waitFor();
    const rendered = await live.evaluate(() => document.body.innerText);
    await live.close();
    expect(w.pages[0]!.title).toBe('Book home');
    expect(w.pages[0]!.text).toBe(rendered);
    expect(w.pages[0]!.text).toContain(TEXT);
    expect(w.pages[0]!.text).toContain('loaded by fetch');
  });

  it('the links artifact has the links the script built, from the rendered DOM', async () => {
    const links = JSON.parse((await artifact(manifest, 'links')).toString('utf8')) as LinksArtifact;
    expect(links.finalUrl).toBe(s.url('a', '/'));
    expect(links.links.map((l) => l.href)).toEqual([s.url('a', '/chapter/1'), s.url('a', '/chapter/2'), s.url('a', '/chapter/3#part'), s.url('a', '/about')]);
  });

  it('follows the script-built links in the next level', async () => {
    const links = JSON.parse((await artifact(manifest, 'links')).toString('utf8')) as LinksArtifact;
    const next = selectLinks(
      [{ action: 'follow', pattern: 'same-origin' }],
      [s.url('a', '/')],
      [{ url: s.url('a', '/'), finalUrl: links.finalUrl!, links: links.links }],
    );
    expect(next.candidates.map((c) => c.url)).toEqual([s.url('a', '/chapter/1'), s.url('a', '/chapter/2'), s.url('a', '/chapter/3'), s.url('a', '/about')]);
    const level1 = await runLevel(dispatchBody({ depth: 1, pages: next.candidates.map((c) => ({ url: c.url, follow: true })) }));
    expect(level1.pages.map((p) => p.status)).toEqual(['captured', 'captured', 'captured', 'captured']);
    for (const path of ['/chapter/1', '/chapter/2', '/chapter/3']) expect(s.pageRequests('a').some((r) => r.path === path)).toBe(true);
  });

  it('png and webp are 1280 px wide screenshots that decode; html is the rendered DOM; mhtml is a multipart snapshot', async () => {
    const png = await artifact(manifest, 'png');
    expect(png.subarray(0, 8).toString('hex')).toBe('89504e470d0a1a0a');
    expect(png.readUInt32BE(16)).toBe(1280);
    const webp = await artifact(manifest, 'webp');
    expect(webp.subarray(0, 4).toString('latin1')).toBe('RIFF');
    expect(webp.subarray(8, 12).toString('latin1')).toBe('WEBP');
    const page = await viewer.newPage();
    const sizes = await page.evaluate(
      async ([p, w]) => {
        const decode = async (b64: string, type: string): Promise<[number, number]> => {
          const bytes = Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
          const bmp = await createImageBitmap(new Blob([bytes], { type }));
          return [bmp.width, bmp.height];
        };
        return [await decode(p, 'image/png'), await decode(w, 'image/webp')];
      },
      [png.toString('base64'), webp.toString('base64')] as const,
    );
    await page.close();
    expect(sizes[0]![0]).toBe(1280);
    expect(sizes[1]![0]).toBe(1280);
    expect(sizes[0]![1]).toBeGreaterThan(0);

    const html = (await artifact(manifest, 'html')).toString('utf8');
    expect(html).toContain(TEXT); // written by the script: this is the DOM, not the served HTML
    expect(html).toContain('href="/chapter/2"');
    const dom = await viewer.newPage();
    await dom.setContent(html.replace(/<script[\s\S]*?<\/script>/g, ''));
    expect(await dom.locator('#built').textContent()).toBe(TEXT);
    await dom.close();

    const mhtml = (await artifact(manifest, 'mhtml')).toString('utf8');
    expect(mhtml).toMatch(/^From: /);
    const boundary = /boundary="([^"]+)"/.exec(mhtml)?.[1];
    expect(boundary).toBeDefined();
    expect(mhtml).toMatch(/Content-Type: multipart\/related;/);
    expect(mhtml.split(`--${boundary}`).length).toBeGreaterThan(2);
    expect(mhtml).toContain('Content-Type: text/html');
    expect(mhtml).toContain(`Snapshot-Content-Location: ${s.url('a', '/')}`);
  });

  it('replays from the archive alone in the project replay: styled, image decoded, script text present', async () => {
    const replay: FastifyInstance = await buildReplayServer({ endpoint: alone.config.s3.endpoint, bucket: alone.config.s3.bucket });
    const replayUrl = await replay.listen({ host: '127.0.0.1', port: 0 });
    const waczKey = manifest.artifacts.find((a) => a.format === 'wacz')!.key;
    // the site is gone: what replays can only come from the WACZ
    await s.close();
    const page = await viewer.newPage();
    try {
      // replay reads only what the API signed (as the picker does after can_view)
      const signed = await createUrlSigner(alone.config.s3)(alone.config.s3.bucket, waczKey, 300);
      await page.goto(`${replayLink(replayUrl, waczKey, signed)}#view=pages&url=${encodeURIComponent(s.url('a', '/'))}`);
      const until = Date.now() + 60_000;
      let seen: { bg: string; natural: number; built: string | null; font: boolean } | undefined;
      while (Date.now() < until) {
        const frame = page.frames().find((f) => f.url().includes(`${s.hosts.a!.host}/`) && f.url().includes('mp_'));
        seen = frame
          ? await frame
              .evaluate(async () => ({
                bg: getComputedStyle(document.body).backgroundColor,
                natural: (document.getElementById('logo') as HTMLImageElement | null)?.naturalWidth ?? 0,
                built: document.getElementById('built')?.textContent ?? null,
                font: (await document.fonts.ready, document.fonts.check('12px TestMono')),
              }))
              .catch(() => undefined)
          : undefined;
        if (seen?.built === TEXT && seen.natural > 0) break;
        await page.waitForTimeout(250);
      }
      expect(seen).toEqual({ bg: 'rgb(1, 2, 3)', natural: 64, built: TEXT, font: true });
    } finally {
      await page.close();
      await replay.close();
    }
  });
});

describe('bounds', { timeout: 120_000 }, () => {
  let browser: CaptureBrowser;
  const fetcher = createGuardedFetcher(createAddressPolicy(parseAllowlist(TEST_SITES_ALLOW)));
  const visit = (url: string, over: Partial<Parameters<typeof visitPage>[2]> = {}): ReturnType<typeof visitPage> =>
    visitPage(browser, url, { userAgent: CAPTURE_USER_AGENT, fetcher, formats: ['wacz'], extraMs: 0, deadlineMs: 30_000, injectFailure: false, ...over });

  beforeAll(() => {
    browser = new CaptureBrowser();
  });
  afterAll(async () => {
    await browser.close();
  });

  it('a page that never finishes loading is cancelled at the deadline, through the webhook', async () => {
    const s = await site({
      a: { pages: { '/': '<title>hang</title><img src="/never.png">', '/never.png': { body: Buffer.alloc(1), contentType: 'image/png', delayMs: 60_000 } } },
    });
    const body = dispatchBody({ pages: [{ url: s.url('a', '/'), follow: false }] });
    const report = await runLevel(body, '?deadlineMs=1500');
    const p = report.pages[0]!;
    expect(p.status).toBe('failed');
    const m = await manifestOf(p);
    expect(m.error?.type).toBe(ERROR_TYPE_CANCELLED);
    expect(m.artifacts).toEqual([]);
    const took = Date.parse(p.finishedAt!) - Date.parse(p.submittedAt!);
    expect(took).toBeGreaterThanOrEqual(1500);
    expect(took).toBeLessThan(10_000);
  });

  it("the host's part ends when the page has been read: onHostDone is told once, with the visit's hostDoneAt, while its page is still open to be rendered", async () => {
    const s = await site({ a: { pages: { '/': '<title>read</title><p>read, then rendered</p>' } } });
    const contexts: BrowserContext[] = [];
    const newContext = browser.newContext.bind(browser);
    browser.newContext = async (o) => {
      const c = await newContext(o);
      contexts.push(c);
      return c;
    };
    const told: { at: number; openPages: number }[] = [];
    try {
      const v = await visit(s.url('a', '/'), {
        formats: ['wacz', 'png', 'mhtml'],
        onHostDone: (at) => told.push({ at, openPages: contexts[0]!.pages().length }),
      });
      expect(v.kind).toBe('rendered');
      // told before the png and mhtml were made and the context closed, which the visit did after
      expect(told).toEqual([{ at: v.hostDoneAt, openPages: 1 }]);
      expect(contexts[0]!.pages()).toHaveLength(0);
      if (v.kind === 'rendered') expect(v.artifacts.png!.length).toBeGreaterThan(0);
    } finally {
      browser.newContext = newContext;
    }
  });

  it('a 2 MB page with 50,000 elements is captured well within the deadline', async () => {
    const items = Array.from({ length: 50_000 }, (_, i) => `<li class="i">item ${i} with some words</li>`).join('');
    const html = `<title>Big</title><ul>${items}</ul>`;
    expect(html.length).toBeGreaterThan(1.9e6);
    const s = await site({ a: { pages: { '/': html } } });
    const v = await visit(s.url('a', '/'), { deadlineMs: 60_000, formats: ['wacz', 'html', 'links'] });
    expect(v.kind).toBe('rendered');
    if (v.kind !== 'rendered') return;
    expect(v.page.title).toBe('Big');
    // 1.35 MB of text: the first MAX_PAGE_TEXT_BYTES of it are kept, and how long it was is noted
    const full = Array.from({ length: 50_000 }, (_, i) => `item ${i} with some words`).join('\n');
    expect(Buffer.byteLength(v.page.text)).toBe(MAX_PAGE_TEXT_BYTES);
    expect(full.startsWith(v.page.text)).toBe(true);
    expect(v.page.truncated).toEqual({ text: Buffer.byteLength(full) });
    expect(v.artifacts.html!.length).toBeGreaterThan(1.9e6);
  });

  it("no capture's window preloads Chromium's WebUI omnibox popup, the flow's Chromium still disables every feature Playwright disables, and it keeps no spare renderer", async () => {
    const s = await site({ a: { pages: { '/': '<title>open</title><p>a page held open</p>' } } });
    const isWebUi = (p: ProcessInfo): boolean => p.args.includes('--top-chrome-webui');
    const isRenderer = (p: ProcessInfo): boolean => p.args.includes('--type=renderer');
    /** the features a browser runs without, as it tells its renderers (the last --disable-features it was given) */
    const disabledFeatures = (browser: ProcessInfo): string[] => lastSwitch(descendants(browser).find(isRenderer)!.args, 'disable-features')!.split(',');
    let captureOpen = true;
    const capture = visit(s.url('a', '/'), { extraMs: 6000 }).finally(() => (captureOpen = false));
    await expect.poll(() => s.pageRequests('a').length, { timeout: 20_000 }).toBe(1);
    // the oracle: Playwright's Chromium as it comes (the replay viewer) has one once a window is open
    const context = await viewer.newContext();
    try {
      await (await context.newPage()).setContent('<p>viewer</p>');
      const plain = (): ProcessInfo[] => chromiumBrowsers((args) => lastSwitch(args, 'proxy-server') === undefined);
      expect(plain()).toHaveLength(1);
      await expect.poll(() => descendants(plain()[0]!).some(isWebUi), { timeout: 20_000 }).toBe(true);
      // while the capture's page is still open (it lingers 6 s), the flow's browser has none
      const flowBrowsers = chromiumBrowsers((args) => args.includes('--proxy-bypass-list=<-loopback>'));
      expect(captureOpen).toBe(true);
      expect(flowBrowsers.length).toBeGreaterThanOrEqual(1);
      const playwrights = disabledFeatures(plain()[0]!);
      expect(playwrights).toContain('PaintHolding');
      for (const b of flowBrowsers) expect(descendants(b).filter(isWebUi)).toEqual([]);
      // the one holding the capture open (the file's flow has its own browser, idle by now)
      const capturing = flowBrowsers.filter((b) => descendants(b).some(isRenderer));
      expect(capturing).toHaveLength(1);
      expect(disabledFeatures(capturing[0]!)).toEqual(expect.arrayContaining([...playwrights, 'WebUIOmniboxPopup', 'SpareRendererForSitePerProcess']));
      // one page open, one renderer: none is kept started ahead of the next capture
      expect(descendants(capturing[0]!).filter(isRenderer)).toHaveLength(1);
    } finally {
      await context.close();
    }
    expect((await capture).kind).toBe('rendered');
  });

  it('text fetched after load is read once the page goes quiet; a page that never goes quiet is read after the cap', async () => {
    const late = `<title>late</title><p id="x">waiting</p><script>addEventListener('load', () => fetch('/late.json').then((r) => r.json()).then((j) => { document.getElementById('x').textContent = j.note; }));</script>`;
    const polling = `<title>poll</title><p id="n">0</p><script>let n = 0; addEventListener('load', () => setInterval(() => fetch('/tick?' + ++n).then(() => { document.getElementById('n').textContent = String(n); }), 20));</script>`;
    const s = await site({
      a: {
        pages: {
          '/late': late,
          '/late.json': { contentType: 'application/json', body: '{"note":"arrived after load"}', delayMs: 400 },
          '/poll': polling,
          '/tick': { contentType: 'text/plain', body: 'ok' },
        },
      },
    });
    const v = await visit(s.url('a', '/late'));
    expect(v.kind).toBe('rendered');
    if (v.kind !== 'rendered') return;
    expect(v.page.text).toBe('arrived after load');
    const p = await visit(s.url('a', '/poll'));
    expect(p.kind).toBe('rendered');
    if (p.kind !== 'rendered') return;
    // read after the 2 s cap: by then many ticks have been answered
    expect(Number(p.page.text)).toBeGreaterThan(10);
  });

  it('two captures in a row share no cookies (and cookies do work within one capture)', async () => {
    const s = await site({
      a: {
        pages: {
          '/set': {
            body: '<title>set</title><script>document.cookie="js=1; path=/"</script><img src="/after.png">',
            headers: { 'set-cookie': 'server=1; Path=/' },
          },
          '/after.png': { body: Buffer.alloc(0), contentType: 'image/png' },
          '/check': '<title>check</title><img src="/check.png">',
          '/check.png': { body: Buffer.alloc(0), contentType: 'image/png' },
        },
      },
    });
    expect((await visit(s.url('a', '/set'))).kind).toBe('rendered');
    expect(s.log.find((r) => r.path === '/after.png')?.cookie).toContain('server=1');
    expect((await visit(s.url('a', '/check'))).kind).toBe('rendered');
    const second = s.log.filter((r) => r.path === '/check' || r.path === '/check.png');
    expect(second).toHaveLength(2);
    for (const r of second) expect(r.cookie).toBeUndefined();
  });

  it('requests over the resource budget are aborted, not recorded, and counted', async () => {
    const imgs = Array.from({ length: 8 }, (_, i) => `<img src="/i${i}.png">`).join('');
    const pages: Record<string, { body: Buffer; contentType: string } | string> = { '/': `<title>many</title>${imgs}` };
    for (let i = 0; i < 8; i++) pages[`/i${i}.png`] = { body: Buffer.alloc(10), contentType: 'image/png' };
    const s = await site({ a: { pages } });
    const v = await visit(s.url('a', '/'), { limits: { maxResources: 3, maxBytes: 1e6 } });
    expect(v.kind).toBe('rendered');
    if (v.kind !== 'rendered') return;
    expect(v.exchanges).toHaveLength(3);
    expect(v.dropped).toBe(6);
    expect(s.pageRequests('a')).toHaveLength(3);
  });

  it('the byte budget holds for responses read at once: six 1 MiB images begun together never hold more than it, and the one that would cross it is cut', async () => {
    // each image sends 600 KiB, then holds its last 400 KiB until a connection is cut: six at
    // 600 KiB are over the page's 2.5 MiB, so unless the budget is shared while they are read,
    // none is ever cut and no image completes before the deadline
    const MiB = 1024 * 1024;
    const log = { cut: 0, finished: [] as string[] };
    let release!: () => void;
    const released = new Promise<void>((r) => (release = r));
    const server = createHttpServer((req, res) => {
      if (req.url === '/') {
        res.writeHead(200, { 'content-type': 'text/html' }).end(`<title>heavy</title>${[0, 1, 2, 3, 4, 5].map((i) => `<img src="/i${i}.png">`).join('')}`);
        return;
      }
      res.on('close', () => {
        if (res.writableFinished) return void log.finished.push(req.url!);
        log.cut++;
        release();
      });
      res.writeHead(200, { 'content-type': 'image/png', 'content-length': String(MiB) });
      res.write(Buffer.alloc(600 * 1024, 0x61));
      void released.then(() => res.end(Buffer.alloc(MiB - 600 * 1024, 0x62)));
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.2', r));
    try {
      const origin = `http://127.0.0.2:${(server.address() as AddressInfo).port}`;
      const v = await visit(`${origin}/`, { deadlineMs: 10_000, limits: { maxResources: 100, maxBytes: 2.5 * MiB } });
      expect(v.kind).toBe('rendered');
      if (v.kind !== 'rendered') return;
      const images = v.exchanges.filter((x) => x.url !== `${origin}/`);
      expect(log.cut).toBeGreaterThanOrEqual(1);
      expect(images.length).toBeGreaterThanOrEqual(1);
      expect(images.length).toBeLessThanOrEqual(2);
      for (const x of images) expect(x.response.body.length).toBe(MiB);
      for (const x of images) expect(log.finished).toContain(new URL(x.url).pathname);
      expect(v.exchanges.reduce((n, x) => n + x.response.body.length, 0)).toBeLessThanOrEqual(2.5 * MiB);
      expect(v.dropped).toBe(6 - images.length);
    } finally {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    }
  });

  it("one response may use the page's whole byte budget: a 21 MiB image, over the fetcher's own 20 MiB default, is recorded whole", async () => {
    const MiB = 1024 * 1024;
    const image = Buffer.alloc(21 * MiB, 0x61);
    const s = await site({ a: { pages: { '/': '<title>large</title><img src="/large.png">', '/large.png': { body: image, contentType: 'image/png' } } } });
    const v = await visit(s.url('a', '/'), { limits: { maxResources: 10, maxBytes: 30 * MiB } });
    expect(v.kind).toBe('rendered');
    if (v.kind !== 'rendered') return;
    expect(v.exchanges.find((x) => x.url === s.url('a', '/large.png'))?.response.body.length).toBe(21 * MiB);
    expect(v.dropped).toBe(0);
  });

  it('keeps 10,000 links per page and the manifest says how many it dropped', async () => {
    const links = Array.from({ length: 10_005 }, (_, i) => `<a href="/l${i}">${i}</a>`).join(' ');
    const s = await site({ a: { pages: { '/': `<title>links</title>${links}` } } });
    const v = await visit(s.url('a', '/'));
    expect(v.kind).toBe('rendered');
    if (v.kind !== 'rendered') return;
    expect(v.page.links).toHaveLength(10_000);
    expect(v.page.links.at(-1)).toEqual({ href: s.url('a', '/l9999') });
    expect(v.page.linksDropped).toBe(5);
    const at = new Date();
    const packaged = await packageCapture(
      v,
      {
        taskId: 't',
        url: s.url('a', '/'),
        follow: true,
        formats: ['wacz'],
        prefix: 'p',
        software: 'test',
        startedAt: at,
        finishedAt: at,
        userAgent: CAPTURE_USER_AGENT,
      },
      'bucket',
    );
    expect(packaged.manifest.dropped).toEqual({ resources: 0, refused: 0, links: 5 });
  });

  it('packageCapture writes the provenance it is given into the warcinfo, which warcio reads', async () => {
    const s = await site({ a: { pages: { '/': '<title>made how</title><p>hi</p>' } } });
    const v = await visit(s.url('a', '/'));
    expect(v.kind).toBe('rendered');
    if (v.kind !== 'rendered') return;
    const at = new Date();
    const provenance = {
      browser: `Chromium ${viewer.version()}`,
      worker: 'browser-capture test',
      settings: { formats: ['wacz'], behaviorsSeconds: 0 },
      robots: 'no robots.txt (404): allowed',
    };
    const packaged = await packageCapture(
      v,
      {
        taskId: 't',
        url: s.url('a', '/'),
        follow: false,
        formats: ['wacz'],
        prefix: 'p',
        software: 'capture-ledger-flow/test',
        startedAt: at,
        finishedAt: at,
        userAgent: CAPTURE_USER_AGENT,
        provenance,
      },
      'bucket',
    );
    const w = await readWacz(packaged.objects.find((o) => o.format === 'wacz')!.body);
    const records = await readWithWarcio(w.entries.get(WARC_PATH)!.data);
    expect(warcFieldsOf(records[0]!.content).slice(0, 6)).toEqual([
      ['software', 'capture-ledger-flow/test'],
      ['browser', provenance.browser],
      ['http-header-user-agent', CAPTURE_USER_AGENT],
      ['capture-worker', 'browser-capture test'],
      ['crawl-settings', JSON.stringify(provenance.settings)],
      ['robots', provenance.robots],
    ]);
    expect(w.datapackage).toMatchObject({ software: 'capture-ledger-flow/test', created: at.toISOString(), title: 'made how' });
    const responses = records.filter((r) => r.type === 'response');
    expect(responses.map((r) => r.uri)).toContain(s.url('a', '/'));
    expect(new Set(responses.map((r) => r.header('WARC-IP-Address')))).toEqual(new Set([new URL(s.url('a', '/')).hostname]));
  });

  it('a page past the links cap is laid out with a break opportunity everywhere; a page at the cap as it is', async () => {
    const page = await viewer.newPage();
    try {
      await page.addInitScript(breakAnywherePastCap, 3);
      const wordBreak = async (anchors: number): Promise<[string, number]> => {
        const html = `<p>${Array.from({ length: anchors }, (_, i) => `<a href="/l${i}">${i}</a>`).join('')}</p>`;
        await page.goto(`data:text/html,${encodeURIComponent(html)}`);
        return page.evaluate(() => [getComputedStyle(document.querySelector('a')!).wordBreak, document.adoptedStyleSheets.length] as [string, number]);
      };
      expect(await wordBreak(3)).toEqual(['normal', 0]);
      expect(await wordBreak(4)).toEqual(['break-all', 1]);
    } finally {
      await page.close();
    }
  });

  it('a document over the byte budget fails the page as too large', async () => {
    const s = await site({ a: { pages: { '/': `<title>big</title>${'x'.repeat(5000)}` } } });
    const v = await visit(s.url('a', '/'), { limits: { maxResources: 10, maxBytes: 1000 } });
    expect(v).toMatchObject({ kind: 'failed', errorType: ERROR_TYPES.tooLarge });
  });

  it('a main document the address policy refuses fails the page; a refused subresource is aborted and counted', async () => {
    const refused = await visit('http://127.0.0.1:9/');
    expect(refused).toMatchObject({ kind: 'failed', errorType: ERROR_TYPES.addressRefused });
    const s = await site({ a: { pages: { '/': '<title>t</title><img src="http://127.0.0.1:9/x.png"><img src="http://10.1.2.3/y.png">' } } });
    const v = await visit(s.url('a', '/'));
    expect(v.kind).toBe('rendered');
    if (v.kind !== 'rendered') return;
    expect(v.refused).toBe(2);
    expect(v.exchanges.map((x) => x.url)).toEqual([s.url('a', '/')]);
  });

  it('nothing the page does reaches an address the policy refuses: fetch, beacon, iframe, websocket, EventSource, service worker', async () => {
    await withListener(async (listener, target) => {
      const s = await site({
        a: {
          pages: {
            '/': `<title>escape</title><iframe src="http://${target}/frame"></iframe><link rel="prefetch" href="http://${target}/prefetch"><script>
              fetch('http://${target}/fetch').catch(() => {});
              navigator.sendBeacon('http://${target}/beacon', 'x');
              try { new WebSocket('ws://${target}/ws'); } catch (e) {}
              try { new EventSource('http://${target}/es'); } catch (e) {}
              if (navigator.serviceWorker) navigator.serviceWorker.register('/sw.js').catch(() => {});
              document.title = 'escape tried';
            </script>`,
            '/sw.js': { contentType: 'text/javascript', body: `self.addEventListener('install', () => fetch('http://${target}/from-sw'));` },
          },
        },
      });
      const v = await visit(s.url('a', '/'), { extraMs: 1500 });
      expect(v.kind).toBe('rendered');
      if (v.kind !== 'rendered') return;
      expect(v.page.title).toBe('escape tried');
      expect(v.refused).toBeGreaterThanOrEqual(3); // iframe, fetch, beacon at least (prefetch and EventSource may be too)
      expect(v.exchanges.every((x) => !x.url.includes(target))).toBe(true);
      // the websocket never passes route(): the backstop proxy refused it (with Chromium's own background requests)
      expect(await browser.proxyRefused()).toBeGreaterThanOrEqual(1);
      expect(listener.connections).toBe(0);
    });
  });

  it("a cross-site iframe's and a dedicated worker's requests go through the fetcher: recorded when allowed, refused when not", async () => {
    await withListener(async (listener, target) => {
      const s = await site({
        a: {
          pages: {
            '/': `<title>nested</title><iframe src="{{b}}/frame"></iframe><script>
              const w = new Worker('/w.js');
              w.onmessage = (e) => { document.title = 'worker said ' + e.data; };
            </script>`,
            '/w.js': {
              contentType: 'text/javascript',
              body: `fetch('http://${target}/from-worker').catch(() => {}); fetch('/from-worker').then((r) => r.text()).then((t) => postMessage(t));`,
            },
            '/from-worker': { contentType: 'text/plain', body: 'hello' },
          },
        },
        b: {
          pages: {
            '/frame': `<title>frame</title><img src="/f.png"><script>fetch('http://${target}/from-frame').catch(() => {});</script>`,
            '/f.png': { body: Buffer.alloc(5), contentType: 'image/png' },
          },
        },
      });
      const v = await visit(s.url('a', '/'), { extraMs: 1000 });
      expect(v.kind).toBe('rendered');
      if (v.kind !== 'rendered') return;
      expect(v.page.title).toBe('worker said hello');
      expect(v.exchanges.map((x) => x.url).sort()).toEqual(
        [s.url('a', '/'), s.url('a', '/from-worker'), s.url('a', '/w.js'), s.url('b', '/f.png'), s.url('b', '/frame')].sort(),
      );
      expect(v.refused).toBe(2);
      expect(listener.connections).toBe(0);
    });
  });

  it('redirects: every hop goes through the fetcher and is recorded, for the document and for a subresource', async () => {
    const s = await site({
      a: {
        pages: { '/start': { redirect: '{{b}}/moved' }, '/old.png': { redirect: '/new.png' }, '/new.png': { body: Buffer.alloc(3), contentType: 'image/png' } },
      },
      b: { pages: { '/moved': '<title>moved</title><img src="{{a}}/old.png">' } },
    });
    const v = await visit(s.url('a', '/start'));
    expect(v.kind).toBe('rendered');
    if (v.kind !== 'rendered') return;
    expect(v.finalUrl).toBe(s.url('b', '/moved'));
    expect(v.exchanges.map((x) => `${x.response.status} ${x.url}`)).toEqual([
      `302 ${s.url('a', '/start')}`,
      `200 ${s.url('b', '/moved')}`,
      `302 ${s.url('a', '/old.png')}`,
      `200 ${s.url('a', '/new.png')}`,
    ]);
  });

  it('dialogs are dismissed and pop-ups closed; downloads are refused', async () => {
    const s = await site({
      a: {
        pages: {
          '/': '<title>noisy</title><script>alert("hi"); confirm("sure?"); window.open("/popup");</script><p>after</p>',
          '/popup': '<title>popup</title>',
          '/file.bin': {
            body: Buffer.alloc(100),
            contentType: 'application/octet-stream',
            headers: { 'content-disposition': 'attachment; filename=file.bin' },
          },
        },
      },
    });
    const v = await visit(s.url('a', '/'), { extraMs: 300 });
    expect(v.kind).toBe('rendered');
    if (v.kind !== 'rendered') return;
    expect(v.page.text).toBe('after');
    const dl = await visit(s.url('a', '/file.bin'));
    expect(dl).toMatchObject({ kind: 'failed', errorType: ERROR_TYPES.contentType });
  });
});
