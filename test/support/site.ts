// A multi-host test website: one HTTP server per host on its own 127.0.0.x address (all of
// 127.0.0.0/8 routes to lo on Linux), with pages, links, redirects, robots.txt and response
// delays, and a log of every request with when it arrived and when its response finished — so a
// test can measure the pacing the other end actually felt.
//
//   const site = await startSite({ hosts: {
//     a: { robots: 'User-agent: *\nDisallow: /private\n', pages: {
//       '/': '<title>Home</title><a href="/x">x</a> <a href="{{b}}/">b</a> <a href="/p" rel="nofollow">p</a>',
//       '/x': { body: '<title>X</title>', delayMs: 50 },
//       '/go': { redirect: '{{b}}/landing' },
//     } },
//     b: { pages: { '/': 'B', '/landing': '<title>Landed</title>' }, delayMs: 20 },
//   } });
//   site.url('a', '/')        // 'http://127.0.0.2:41234/'
//   site.hosts.b.host         // '127.0.0.3:41235' (the pacing key)
//   site.pageRequests('a')    // requests on a, robots.txt left out
//   site.gaps('a')            // start of each request − finish of the one before, per host
//   await site.close()
//
// "{{name}}" in a body, a redirect or a robots.txt is replaced by that host's base URL
// (http://127.0.0.x:port, no trailing slash).
import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { deflateSync } from 'node:zlib';

export interface SitePage {
  /** the response body (HTML unless contentType says otherwise) */
  body?: string | Buffer;
  /** default 200 (302 when redirect is set) */
  status?: number;
  /** default text/html; charset=utf-8 */
  contentType?: string;
  headers?: Record<string, string>;
  /** Location header; relative or absolute, "{{host}}" placeholders allowed */
  redirect?: string;
  /** wait this long before answering (on top of the host's delayMs) */
  delayMs?: number;
}

export interface SiteHostSpec {
  /** path (with query, if any) → page; a string is an HTML body */
  pages: Record<string, SitePage | string>;
  /** robots.txt body; absent → 404 (unless pages has a '/robots.txt' entry, served as a page) */
  robots?: string;
  /** answer robots.txt with this status instead (e.g. 503) */
  robotsStatus?: number;
  /** wait this long before every response on this host */
  delayMs?: number;
  /** 127.0.0.x to listen on; default 127.0.0.2, .3, ... in the order hosts are given */
  address?: string;
  /** fixed port; default 0 (any free port) */
  port?: number;
}

export interface SiteOptions {
  hosts: Record<string, SiteHostSpec>;
  /** first 127.0.0.x address to hand out (default 2) */
  firstAddress?: number;
}

export interface SiteRequest {
  /** the host's name in the spec */
  name: string;
  /** host:port as requested (the pacing key) */
  host: string;
  method: string;
  /** path and query */
  path: string;
  url: string;
  status: number;
  userAgent: string | undefined;
  /** the Cookie header the request carried */
  cookie: string | undefined;
  /** ms since the epoch: the request arrived / its response finished (or the socket closed) */
  startedAt: number;
  finishedAt: number;
  /** the client went away before the response was complete */
  aborted: boolean;
}

export interface SiteHost {
  name: string;
  address: string;
  port: number;
  /** host:port — how DispatchBody.notBefore and crawl_pages key the host */
  host: string;
  /** http://address:port */
  base: string;
}

export interface Gap {
  prev: SiteRequest;
  next: SiteRequest;
  /** next.startedAt − prev.finishedAt (negative: they overlapped) */
  gapMs: number;
}

export interface Site {
  hosts: Record<string, SiteHost>;
  /** absolute URL of a path on a named host */
  url(name: string, path?: string): string;
  /** every request so far, in arrival order (completed ones; see inFlight) */
  readonly log: SiteRequest[];
  /** requests being answered right now */
  readonly inFlight: number;
  /** requests on one host (or all), robots.txt left out */
  pageRequests(name?: string): SiteRequest[];
  /** per host, consecutive page requests' gaps (start − previous finish), robots.txt left out */
  gaps(name: string): Gap[];
  /** the most distinct hosts that were being answered at one instant (page requests) */
  maxConcurrentHosts(): number;
  /** change or add a page while running */
  setPage(name: string, path: string, page: SitePage | string | undefined): void;
  setRobots(name: string, robots: string | undefined, status?: number): void;
  clearLog(): void;
  close(): Promise<void>;
}

/** At least `ms` by Date.now(): a timer may fire a millisecond early by that clock. */
const sleep = async (ms: number): Promise<void> => {
  const until = Date.now() + ms;
  for (let left = ms; left > 0; left = until - Date.now()) await new Promise((r) => setTimeout(r, left));
};

export async function startSite(opts: SiteOptions): Promise<Site> {
  const names = Object.keys(opts.hosts);
  if (names.length === 0) throw new Error('startSite: no hosts');
  const specs = new Map<string, SiteHostSpec>(names.map((n) => [n, { ...opts.hosts[n]!, pages: { ...opts.hosts[n]!.pages } }]));
  const hosts: Record<string, SiteHost> = {};
  const servers: Server[] = [];
  const log: SiteRequest[] = [];
  let inFlight = 0;
  const first = opts.firstAddress ?? 2;

  const fill = (s: string): string => s.replace(/\{\{([\w-]+)\}\}/g, (m, name: string) => hosts[name]?.base ?? m);

  const handle = (name: string) => async (req: IncomingMessage, res: ServerResponse) => {
    const startedAt = Date.now();
    inFlight++;
    const spec = specs.get(name)!;
    const path = req.url ?? '/';
    const entry: SiteRequest = {
      name,
      host: req.headers.host ?? hosts[name]!.host,
      method: req.method ?? 'GET',
      path,
      url: `${hosts[name]!.base}${path}`,
      status: 0,
      userAgent: req.headers['user-agent'],
      cookie: req.headers.cookie,
      startedAt,
      finishedAt: 0,
      aborted: false,
    };
    let done = false;
    // stamped when the last byte is handed over (end()), not on 'finish': client and server may
    // share one event loop, and the client can act on the response before 'finish' is emitted
    let endedAt: number | undefined;
    const end = res.end.bind(res) as (...args: unknown[]) => ServerResponse;
    res.end = ((...args: unknown[]) => {
      endedAt ??= Date.now();
      return end(...args);
    }) as typeof res.end;
    const finish = (aborted: boolean): void => {
      if (done) return;
      done = true;
      inFlight--;
      entry.finishedAt = endedAt ?? Date.now();
      entry.aborted = aborted;
      entry.status = res.statusCode;
      log.push(entry);
    };
    res.on('finish', () => finish(false));
    res.on('close', () => finish(!res.writableFinished));
    try {
      const pathname = path.split('?')[0]!;
      // robots.txt from `robots`/`robotsStatus`; without either, a page named /robots.txt (e.g. a redirect) or 404
      if (pathname === '/robots.txt' && (spec.robots !== undefined || spec.robotsStatus !== undefined || spec.pages['/robots.txt'] === undefined)) {
        if (spec.delayMs) await sleep(spec.delayMs);
        if (spec.robotsStatus !== undefined) {
          res.writeHead(spec.robotsStatus, { 'content-type': 'text/plain' }).end(`robots.txt ${spec.robotsStatus}`);
        } else if (spec.robots === undefined) {
          res.writeHead(404, { 'content-type': 'text/plain' }).end('no robots.txt');
        } else {
          res.writeHead(200, { 'content-type': 'text/plain' }).end(fill(spec.robots));
        }
        return;
      }
      const raw = spec.pages[path] ?? spec.pages[pathname];
      const page: SitePage | undefined = typeof raw === 'string' ? { body: raw } : raw;
      const delay = (spec.delayMs ?? 0) + (page?.delayMs ?? 0);
      if (delay > 0) await sleep(delay);
      if (res.destroyed) return;
      if (page === undefined) {
        res.writeHead(404, { 'content-type': 'text/html; charset=utf-8' }).end('<title>Not found</title><p>Not found</p>');
        return;
      }
      const headers: Record<string, string> = { 'content-type': page.contentType ?? 'text/html; charset=utf-8', ...(page.headers ?? {}) };
      if (page.redirect !== undefined) headers.location = fill(page.redirect);
      const body = page.body === undefined ? '' : typeof page.body === 'string' ? fill(page.body) : page.body;
      const buf = typeof body === 'string' ? Buffer.from(body, 'utf8') : body;
      headers['content-length'] = String(buf.length);
      res.writeHead(page.status ?? (page.redirect !== undefined ? 302 : 200), headers).end(req.method === 'HEAD' ? undefined : buf);
    } catch (err) {
      if (!res.headersSent) res.writeHead(500).end(String(err));
    }
  };

  try {
    for (let i = 0; i < names.length; i++) {
      const name = names[i]!;
      const spec = specs.get(name)!;
      const address = spec.address ?? `127.0.0.${first + i}`;
      const server = createServer((req, res) => void handle(name)(req, res));
      server.keepAliveTimeout = 1000;
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen(spec.port ?? 0, address, () => resolve());
      });
      servers.push(server);
      const port = (server.address() as AddressInfo).port;
      hosts[name] = { name, address, port, host: `${address}:${port}`, base: `http://${address}:${port}` };
    }
  } catch (err) {
    await Promise.all(servers.map((s) => new Promise((r) => s.close(r))));
    throw err;
  }

  const pageRequests = (name?: string): SiteRequest[] =>
    log.filter((r) => (name === undefined || r.name === name) && r.path.split('?')[0] !== '/robots.txt').sort((a, b) => a.startedAt - b.startedAt);

  return {
    hosts,
    url(name, path = '/') {
      const h = hosts[name];
      if (h === undefined) throw new Error(`no host ${name} on this site`);
      return `${h.base}${path.startsWith('/') ? path : `/${path}`}`;
    },
    get log() {
      return log;
    },
    get inFlight() {
      return inFlight;
    },
    pageRequests,
    gaps(name) {
      const reqs = pageRequests(name);
      const out: Gap[] = [];
      for (let i = 1; i < reqs.length; i++) out.push({ prev: reqs[i - 1]!, next: reqs[i]!, gapMs: reqs[i]!.startedAt - reqs[i - 1]!.finishedAt });
      return out;
    },
    maxConcurrentHosts() {
      // at each request's arrival: the distinct hosts with a request in flight (itself included)
      const reqs = pageRequests();
      let max = 0;
      for (const r of reqs) {
        const names = new Set([r.name]);
        for (const o of reqs) if (o.startedAt <= r.startedAt && o.finishedAt > r.startedAt) names.add(o.name);
        max = Math.max(max, names.size);
      }
      return max;
    },
    setPage(name, path, page) {
      const spec = specs.get(name);
      if (spec === undefined) throw new Error(`no host ${name} on this site`);
      if (page === undefined) delete spec.pages[path];
      else spec.pages[path] = page;
    },
    setRobots(name, robots, status) {
      const spec = specs.get(name);
      if (spec === undefined) throw new Error(`no host ${name} on this site`);
      spec.robots = robots;
      spec.robotsStatus = status;
    },
    clearLog() {
      log.length = 0;
    },
    async close() {
      await Promise.all(
        servers.map(
          (s) =>
            new Promise<void>((resolve) => {
              s.close(() => resolve());
              s.closeAllConnections();
            }),
        ),
      );
    },
  };
}

// ---- bodies built like a real site's: real image bytes, a real font, stylesheets and scripts ----

function crc32(buf: Buffer): number {
  let c = ~0;
  for (const b of buf) {
    c ^= b;
    for (let k = 0; k < 8; k++) c = (c >>> 1) ^ (0xedb88320 & -(c & 1));
  }
  return ~c >>> 0;
}

export function pngChunk(type: string, data: Buffer): Buffer {
  const len = Buffer.alloc(4);
  len.writeUInt32BE(data.length);
  const td = Buffer.concat([Buffer.from(type, 'latin1'), data]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(td));
  return Buffer.concat([len, td, crc]);
}

/** A valid PNG, width × height, one RGB colour (real bytes: signature, IHDR, zlib IDAT, IEND). */
export function pngImage(width: number, height: number, rgb: [number, number, number] = [200, 30, 30]): Buffer {
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr[8] = 8; // bit depth
  ihdr[9] = 2; // truecolour
  const row = Buffer.alloc(1 + width * 3);
  for (let x = 0; x < width; x++) row.set(rgb, 1 + x * 3);
  const raw = Buffer.concat(Array.from({ length: height }, () => row));
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    pngChunk('IHDR', ihdr),
    pngChunk('IDAT', deflateSync(raw)),
    pngChunk('IEND', Buffer.alloc(0)),
  ]);
}

/** A real TrueType font: Debian's DejaVu Sans Mono, which chromium's package depends on (read from disk, never committed). */
export function ttfFont(): Buffer {
  return readFileSync('/usr/share/fonts/truetype/dejavu/DejaVuSansMono.ttf');
}

export interface RealisticPageOptions {
  title: string;
  /** links the script builds (paths or absolute URLs) */
  scriptLinks: string[];
  /** the paragraph the script writes */
  scriptText: string;
  /** links in the static HTML */
  staticLinks?: string[];
  /** where the shared assets live (default '/assets') */
  assets?: string;
}

/** The shared assets every realistic page loads: a stylesheet (with a web font), an image, a font and a script. */
export function realisticAssets(assets = '/assets'): Record<string, SitePage> {
  return {
    [`${assets}/site.css`]: {
      contentType: 'text/css',
      body: `@font-face { font-family: "TestMono"; src: url("${assets}/mono.ttf") format("truetype"); }\nbody { font-family: "TestMono", serif; background-color: rgb(1, 2, 3); color: rgb(250, 250, 250); }\n#nav a { margin-right: 4px; }\n`,
    },
    [`${assets}/logo.png`]: { contentType: 'image/png', body: pngImage(64, 32) },
    [`${assets}/mono.ttf`]: { contentType: 'font/ttf', body: ttfFont() },
    [`${assets}/app.js`]: {
      contentType: 'text/javascript',
      body: `(function(){var c=window.__site||{};var nav=document.getElementById('nav');(c.links||[]).forEach(function(h,i){var a=document.createElement('a');a.href=h;a.textContent='Chapter '+(i+1);nav.appendChild(a);});var p=document.createElement('p');p.id='built';p.textContent=c.text||'';document.getElementById('main').appendChild(p);fetch('${assets}/data.json').then(function(r){return r.json();}).then(function(j){document.getElementById('xhr').textContent=j.note;});})();\n`,
    },
    [`${assets}/data.json`]: { contentType: 'application/json', body: '{"note":"loaded by fetch"}' },
  };
}

/** A page that needs its stylesheet, image, font and script to look like itself. */
export function realisticPage(o: RealisticPageOptions): string {
  const a = o.assets ?? '/assets';
  const statics = (o.staticLinks ?? []).map((h) => `<a href="${h}">${h}</a>`).join(' ');
  return `<!doctype html><html><head><meta charset="utf-8"><title>${o.title}</title><link rel="stylesheet" href="${a}/site.css"></head><body><header><img id="logo" src="${a}/logo.png" alt="logo"><nav id="nav"></nav></header><main id="main"><h1>${o.title}</h1><p>${statics}</p><p id="xhr"></p></main><script>window.__site=${JSON.stringify({ links: o.scriptLinks, text: o.scriptText })};</script><script src="${a}/app.js"></script></body></html>`;
}

/** Hosts each with a front page linking `paths`, each a small page of its own: a crawl of one
 * level after the seeds visits every host the same way. */
export function linkedPagesSite(hosts: readonly string[], paths: readonly string[]): Record<string, SiteHostSpec> {
  return Object.fromEntries(
    hosts.map((h) => [
      h,
      {
        pages: {
          '/': `<title>${h}</title>${paths.map((p) => `<a href="${p}">${p}</a>`).join(' ')}`,
          ...Object.fromEntries(paths.map((p) => [p, `<title>${h} ${p}</title><p>page ${p} of ${h}</p>`])),
        },
      },
    ]),
  );
}
