// The flow's one Chromium (Debian's, through playwright-core), launched on first use and closed
// with the flow. Every request a page makes is answered by the capture's route handler (see
// recorder.ts); as a backstop the browser's proxy is a server the flow owns that refuses
// everything with 403, so whatever escapes route() — Chromium's own background requests,
// websockets, a service worker — connects nowhere. Loopback goes through the proxy too:
// Chromium bypasses proxies for loopback unless told `<-loopback>` (design.md, Known pitfalls).
import { createServer, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { chromium, type Browser, type BrowserContext } from 'playwright-core';

/** Debian's chromium (design.md): npm start, npm test and .ci/run install it when it is missing. */
export const CHROMIUM_PATH = '/usr/bin/chromium';
/** viewport width of every capture (screenshots are this wide) */
export const VIEWPORT = { width: 1280, height: 800 } as const;

/** A proxy that refuses every request and tunnel, counting them. */
export interface RefusingProxy {
  port: number;
  readonly refused: number;
  close(): Promise<void>;
}

export async function startRefusingProxy(onRefuse: (what: string) => void): Promise<RefusingProxy> {
  let refused = 0;
  const sockets = new Set<Socket>();
  const server: Server = createServer((req, res) => {
    refused++;
    onRefuse(`${req.method} ${req.url}`);
    res.writeHead(403, { 'content-type': 'text/plain', connection: 'close' }).end('refused by the capture flow: only requests its route handler answers are allowed\n');
  });
  server.on('connect', (req, socket: Socket) => {
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
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

/**
 * Fewer threads per renderer: one raster thread, no V8 helper threads. Why: with every request
 * intercepted, a page waits on round trips through the flow, and a renderer's many threads spend
 * that waiting contending with each other and with the flow for the few cores a crawler host has.
 * Measured with bench/capture.ts (80 pages, runs alternated, 2 cores): the flow used 62.5 and 62.9
 * CPU-s with these, 70.8 and 69.3 without; its renderers 32–33 against 37.5–38. Playwright loading
 * the same pages without interception was no cheaper with them (measured with
 * --disable-threaded-compositing added). --disable-threaded-compositing is left out: it makes
 * Page.captureScreenshot fail ("Unable to capture screenshot"), and png and webp need it.
 */
export const LEAN_RENDERER_ARGS = ['--num-raster-threads=1', '--js-flags=--single-threaded'] as const;

/** Playwright's launch() adds a fresh temporary --user-data-dir of its own (and refuses one in args). */
export function chromiumArgs(proxyPort: number, root: boolean): string[] {
  return [
    '--headless',
    ...LEAN_RENDERER_ARGS,
    ...(root ? ['--no-sandbox'] : []),
    '--disable-gpu',
    '--disable-background-networking',
    '--disable-component-update',
    '--disable-sync',
    '--no-first-run',
    '--disable-quic',
    '--force-webrtc-ip-handling-policy=disable_non_proxied_udp',
    `--proxy-server=http://127.0.0.1:${proxyPort}`,
    '--proxy-bypass-list=<-loopback>',
  ];
}

export interface ContextOptions {
  userAgent: string;
}

/**
 * Contexts one Chromium serves before captures move to a fresh one. Why: a long-lived browser
 * process keeps state from every context it has had, and its cost per capture grows with the
 * crawl; a new process costs about a second of CPU. The old one closes once its last capture ends.
 */
export const CONTEXTS_PER_BROWSER = 250;

interface Launched {
  browser: Browser;
  proxy: RefusingProxy;
}

/** One Chromium process and the captures open in it. */
interface Generation {
  launched: Promise<Launched>;
  served: number;
  open: number;
  /** no new contexts: closed when the last open one closes */
  retired: boolean;
}

/** The flow's browser: launched lazily, one process at a time per flow (see CONTEXTS_PER_BROWSER). */
export class CaptureBrowser {
  private current: Generation | undefined;
  private readonly live = new Set<Generation>();
  private refusedTotal = 0;
  private closed = false;

  private readonly log: (line: string) => void;
  private readonly contextsPerBrowser: number;

  constructor(log: (line: string) => void = () => {}, opts: { contextsPerBrowser?: number } = {}) {
    this.log = log;
    this.contextsPerBrowser = opts.contextsPerBrowser ?? CONTEXTS_PER_BROWSER;
  }

  private async launch(gen: Generation): Promise<Launched> {
    const proxy = await startRefusingProxy((what) => {
      this.refusedTotal++;
      this.log(`browser proxy refused ${what} (${this.refusedTotal} so far)`);
    });
    try {
      const root = typeof process.getuid === 'function' && process.getuid() === 0;
      const browser = await chromium.launch({ executablePath: CHROMIUM_PATH, headless: true, chromiumSandbox: !root, args: chromiumArgs(proxy.port, root) });
      browser.on('disconnected', () => {
        void proxy.close();
        this.live.delete(gen);
        if (this.closed || gen.retired) return;
        this.log('browser: chromium went away; the next capture launches it again');
        if (this.current === gen) this.current = undefined;
      });
      this.log(`browser: ${CHROMIUM_PATH} ${browser.version()} launched`);
      return { browser, proxy };
    } catch (err) {
      await proxy.close();
      throw new Error(`could not launch chromium at ${CHROMIUM_PATH}: ${(err as Error).message}`);
    }
  }

  private generation(): Generation {
    if (this.current !== undefined && this.current.served >= this.contextsPerBrowser) {
      this.retire(this.current);
      this.current = undefined;
    }
    if (this.current === undefined) {
      const gen: Generation = { launched: undefined as unknown as Promise<Launched>, served: 0, open: 0, retired: false };
      gen.launched = this.launch(gen);
      // a failed launch is not kept: the next capture tries again
      gen.launched.catch(() => {
        this.live.delete(gen);
        if (this.current === gen) this.current = undefined;
      });
      this.live.add(gen);
      this.current = gen;
    }
    return this.current;
  }

  private retire(gen: Generation): void {
    gen.retired = true;
    if (gen.open === 0) void this.shut(gen);
  }

  private async shut(gen: Generation): Promise<void> {
    this.live.delete(gen);
    const l = await gen.launched.catch(() => undefined);
    await l?.browser.close().catch(() => {});
    await l?.proxy.close();
  }

  /** A fresh context: no cookies, storage or cache shared with any other capture. */
  async newContext(opts: ContextOptions): Promise<BrowserContext> {
    if (this.closed) throw new Error('the capture browser is closed');
    const gen = this.generation();
    gen.served++;
    gen.open++;
    let context: BrowserContext;
    try {
      const { browser } = await gen.launched;
      context = await browser.newContext({ viewport: { ...VIEWPORT }, userAgent: opts.userAgent, acceptDownloads: false, serviceWorkers: 'block', javaScriptEnabled: true, bypassCSP: false });
    } catch (err) {
      this.release(gen);
      throw err;
    }
    context.once('close', () => this.release(gen));
    return context;
  }

  private release(gen: Generation): void {
    gen.open--;
    if (gen.retired && gen.open === 0) void this.shut(gen);
  }

  /** What the backstop proxies refused so far (0 before the first launch). */
  proxyRefused(): Promise<number> {
    return Promise.resolve(this.refusedTotal);
  }

  async close(): Promise<void> {
    this.closed = true;
    this.current = undefined;
    await Promise.all([...this.live].map((gen) => this.shut(gen)));
  }
}
