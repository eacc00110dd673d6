// The flow's one Chromium (Debian's, through playwright-core), launched on first use and closed
// with the flow. Every request a page makes is answered by the capture's route handler (see
// recorder.ts); as a backstop the browser's proxy is a server the flow owns that refuses
// everything with 403, so whatever escapes route() — Chromium's own background requests,
// websockets, a service worker — connects nowhere. Loopback goes through the proxy too:
// Chromium bypasses proxies for loopback unless told `<-loopback>` (design.md, Known pitfalls).
// Chromium always runs with its sandbox: a root process launches it as the capture user.
import { createServer, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser, type BrowserContext } from 'playwright-core';

/** Debian's chromium (design.md): npm start, npm test and .ci/run install it when it is missing. */
export const CHROMIUM_PATH = '/usr/bin/chromium';
/** Runs CHROMIUM_PATH as the capture user (scripts/lib/capture-user.mjs), for a process that is root. */
export const CHROMIUM_AS_CAPTURE_USER = fileURLToPath(new URL('./chromium-as-capture-user.sh', import.meta.url));

/** What Chromium inherits: the locale, the time zone, the temp dir, HOME, and PATH (Debian's launcher needs it). */
const PASSED_TO_CHROMIUM = ['PATH', 'HOME', 'LANG', 'LC_ALL', 'TZ', 'TMPDIR'] as const;

/**
 * Chromium's whole environment: none of the capture process's settings (its S3 key, say). The
 * filler is room: a renderer's process title (its command line, as /proc shows it) is written
 * over its zygote's arguments and environment, and a bare environment cuts it short at about 1 KB.
 */
export function chromiumEnvironment(env: NodeJS.ProcessEnv = process.env): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of PASSED_TO_CHROMIUM) {
    const value = env[name];
    if (value !== undefined) out[name] = value;
  }
  out.CHROMIUM_PROCESS_TITLE_ROOM = '.'.repeat(4096);
  return out;
}

/**
 * What Playwright runs: Chromium itself, or as root the wrapper that drops it to the capture user
 * (Chromium's sandbox does not run as root, and it is never turned off).
 */
export function chromiumExecutable(uid: number | undefined = process.getuid?.()): string {
  return uid === 0 ? CHROMIUM_AS_CAPTURE_USER : CHROMIUM_PATH;
}
/** viewport width of every capture (screenshots are this wide) */
export const VIEWPORT = { width: 1280, height: 800 } as const;

/** A proxy that refuses every request and tunnel, counting them. */
export interface RefusingProxy {
  port: number;
  readonly refused: number;
  /** connections it holds now: a refused one's, until its peer goes */
  readonly open: number;
  close(): Promise<void>;
}

export async function startRefusingProxy(onRefuse: (what: string) => void): Promise<RefusingProxy> {
  let refused = 0;
  const sockets = new Set<Socket>();
  const server: Server = createServer((req, res) => {
    refused++;
    onRefuse(`${req.method} ${req.url}`);
    res
      .writeHead(403, { 'content-type': 'text/plain', connection: 'close' })
      .end('refused by the capture flow: only requests its route handler answers are allowed\n');
  });
  server.on('connect', (req, socket: Socket) => {
    // Node hands a tunnel's socket over without the server's error listener: a browser that
    // resets the refused tunnel (Chromium does, closing) would otherwise throw in this process
    socket.on('error', () => {});
    refused++;
    onRefuse(`CONNECT ${req.url}`);
    socket.end('HTTP/1.1 403 Forbidden\r\nConnection: close\r\nContent-Length: 0\r\n\r\n');
  });
  server.on('connection', (s: Socket) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  return {
    port: (server.address() as AddressInfo).port,
    get refused() {
      return refused;
    },
    get open() {
      return sockets.size;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

/**
 * What Playwright's launch() disables with its own --disable-features (playwright-core 1.65).
 * Chromium keeps only the last --disable-features it is given, so the flow's list repeats these;
 * a test compares what the flow's renderers are told with what Playwright's are.
 */
const PLAYWRIGHT_DISABLED_FEATURES = [
  'AvoidUnnecessaryBeforeUnloadCheckSync',
  'DestroyProfileOnBrowserClose',
  'HttpsUpgrades',
  'HttpsFirstBalancedModeAutoEnable',
  'LensOverlay',
  'MediaRouter',
  'PaintHolding',
  'ThirdPartyStoragePartitioning',
  'AvoidCorsURLLoaderRestartOnRedirect',
  'TcpPortRandomizationWin',
  'OptimizationHints',
  'NetworkTimeServiceQuerying',
  'AimEnabled',
  'PreconnectToSearch',
  'msForceBrowserSignIn',
  'msEdgeUpdateLaunchServicesPreferredVersion',
] as const;

/**
 * No spare renderer. Why: with site isolation Chromium keeps one renderer started ahead of the
 * next navigation; a capture's every page is a fresh context on a new site, so it is one more
 * process per worker at all times (bench/capture.ts, 40 pages: 14 processes at the peak with it,
 * 12 without; some 80 MiB RSS, 15–20 MiB PSS), and its start-up is CPU the worker spends anyway.
 *
 * No WebUI omnibox popup. Why: every context's window gets one preloaded, in headless mode too,
 * where nobody can ever open it: chrome://omnibox-popup.top-chrome, some 360 script modules run in
 * a WebUI renderer. Measured with Playwright loading the bench pages (40 per run, 2 cores): 0.68–0.74
 * CPU-s a page with it, 0.44–0.46 without; and a page left open a second after load cost 1.04 CPU-s
 * with it (that renderer's work runs on), 0.47–0.51 without.
 */
const FLOW_DISABLED_FEATURES = [
  'WebUIOmniboxPopup',
  'WebUIOmniboxAimPopup',
  'WebUIOmniboxFullPopup',
  'PreloadTopChromeWebUI',
  'SpareRendererForSitePerProcess',
] as const;

/**
 * Playwright's launch() adds a fresh temporary --user-data-dir of its own (and refuses one in args).
 * No smooth scrolling. Why: the behaviors' autoscroll (behaviors.ts) first asks for a smooth
 * scroll to the page's end and looks 500 ms later whether the page grew; smooth, a 6,000 px page
 * was still 1,000 px short of its end then (measured), so a feed loading at its end was never
 * scrolled to. Instant, the feed's next page has loaded by then.
 */
export function chromiumArgs(proxyPort: number): string[] {
  return [
    '--headless',
    `--disable-features=${[...PLAYWRIGHT_DISABLED_FEATURES, ...FLOW_DISABLED_FEATURES].join(',')}`,
    '--disable-gpu',
    '--disable-background-networking',
    '--disable-component-update',
    '--disable-sync',
    '--no-first-run',
    '--disable-quic',
    '--disable-smooth-scrolling',
    '--force-webrtc-ip-handling-policy=disable_non_proxied_udp',
    `--proxy-server=http://127.0.0.1:${proxyPort}`,
    '--proxy-bypass-list=<-loopback>',
  ];
}

export interface ContextOptions {
  userAgent: string;
}

/** The flow's browser: launched lazily, one per flow process. */
export class CaptureBrowser {
  private launching: Promise<{ browser: Browser; proxy: RefusingProxy }> | undefined;
  private closed = false;

  private readonly log: (line: string) => void;

  constructor(log: (line: string) => void = () => {}) {
    this.log = log;
  }

  private launch(): Promise<{ browser: Browser; proxy: RefusingProxy }> {
    if (this.closed) return Promise.reject(new Error('the capture browser is closed'));
    this.launching ??= (async () => {
      const proxy = await startRefusingProxy((what) => this.log(`browser proxy refused ${what} (${proxy.refused} so far)`));
      try {
        const executablePath = chromiumExecutable();
        // Playwright turns the sandbox off itself unless told chromiumSandbox is true
        const browser = await chromium.launch({
          executablePath,
          headless: true,
          chromiumSandbox: true,
          env: chromiumEnvironment(),
          args: chromiumArgs(proxy.port),
        });
        browser.on('disconnected', () => {
          if (this.closed) return;
          this.log('browser: chromium went away; the next capture launches it again');
          this.launching = undefined;
          void proxy.close();
        });
        this.log(`browser: ${CHROMIUM_PATH} ${browser.version()} launched${executablePath === CHROMIUM_PATH ? '' : ' as the capture user'}`);
        return { browser, proxy };
      } catch (err) {
        await proxy.close();
        this.launching = undefined;
        throw new Error(`could not launch chromium at ${CHROMIUM_PATH}: ${(err as Error).message}`);
      }
    })();
    return this.launching;
  }

  /** A fresh context: no cookies, storage or cache shared with any other capture. */
  async newContext(opts: ContextOptions): Promise<BrowserContext> {
    const { browser } = await this.launch();
    return browser.newContext({
      viewport: { ...VIEWPORT },
      userAgent: opts.userAgent,
      acceptDownloads: false,
      serviceWorkers: 'block',
      javaScriptEnabled: true,
      bypassCSP: false,
    });
  }

  /** The browser's name and version, e.g. "Chromium 141.0.7390.54" (launches it if need be). */
  async version(): Promise<string> {
    const { browser } = await this.launch();
    return `Chromium ${browser.version()}`;
  }

  /** What the backstop proxy refused so far (0 before the first launch). */
  async proxyRefused(): Promise<number> {
    if (this.launching === undefined) return 0;
    return (await this.launching).proxy.refused;
  }

  async close(): Promise<void> {
    this.closed = true;
    const l = this.launching;
    this.launching = undefined;
    if (l === undefined) return;
    const { browser, proxy } = await l.catch(() => ({ browser: undefined, proxy: undefined }));
    await browser?.close().catch(() => {});
    await proxy?.close();
  }
}
