// What a hostile page points a crawler at, for tests of the address policy:
//
// - a listener on 127.0.0.1 (where the stack lives, never allowlisted) that counts every TCP
//   connection it accepts — before any byte, so "no connection at all" is what it proves — and
//   answers anything that does arrive with a page, so a leak would also be archived;
// - the pages of a hostile test site (for test/support/site.ts) whose seeds, links, redirects and
//   robots.txt all aim at that listener under every spelling the policy has to see through.
import { createServer as createHttpServer } from 'node:http';
import { createServer, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import type { SiteHostSpec } from './site.ts';

export interface Listener {
  /** 127.0.0.1 */
  address: string;
  port: number;
  /** every connection accepted so far, in order */
  connections: { at: number; remoteAddress: string | undefined; firstBytes: string }[];
  close(): Promise<void>;
}

export async function startListener(address = '127.0.0.1'): Promise<Listener> {
  const sockets = new Set<Socket>();
  const connections: Listener['connections'] = [];
  const server: Server = createServer((socket) => {
    const entry = { at: Date.now(), remoteAddress: socket.remoteAddress, firstBytes: '' };
    connections.push(entry);
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => {});
    socket.once('data', (b: Buffer) => {
      entry.firstBytes = b.subarray(0, 200).toString('latin1');
      const body = '<title>internal secret</title>';
      socket.end(`HTTP/1.1 200 OK\r\ncontent-type: text/html\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`);
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, address, () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  return {
    address,
    port,
    connections,
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}

/** Every way of writing "the listener" a page might use; each must be refused without a connection. */
export function listenerUrls(port: number): Record<string, string> {
  return {
    loopback: `http://127.0.0.1:${port}/seed`,
    localhost: `http://localhost:${port}/x`,
    'sub.localhost': `http://api.localhost:${port}/x`,
    'ipv6-loopback': `http://[::1]:${port}/x`,
    'ipv4-mapped': `http://[::ffff:127.0.0.1]:${port}/x`,
    decimal: `http://2130706433:${port}/x`,
    hex: `http://0x7f000001:${port}/x`,
    short: `http://127.1:${port}/x`,
    metadata: 'http://169.254.169.254/latest/meta-data/',
    'long-host': `http://${'a'.repeat(3000)}.example:${port}/x`,
    'long-url': `http://127.0.0.1:${port}/${'p'.repeat(9000)}`,
  };
}

/**
 * A test site host whose home page links to every listener URL (and to `rebindUrl`, a name a
 * test resolver turns into 127.0.0.1), whose /go and robots.txt redirect to the listener, and
 * whose other pages are ordinary, so the crawl has something legitimate to succeed with.
 */
export function hostileHost(port: number, opts: { rebindUrl?: string } = {}): SiteHostSpec {
  const urls = Object.values(listenerUrls(port));
  if (opts.rebindUrl !== undefined) urls.push(opts.rebindUrl);
  const links = urls.map((u) => `<a href="${u}">x</a>`).join('\n');
  return {
    pages: {
      '/': `<title>Hostile</title>\n${links}\n<a href="/go">go</a> <a href="/fine">fine</a> <a href="/go-mapped">m</a>`,
      '/fine': '<title>Fine</title><p>an ordinary page</p>',
      '/go': { redirect: `http://127.0.0.1:${port}/redirected` },
      '/go-mapped': { redirect: `http://[::ffff:7f00:1]:${port}/redirected` },
      // robots.txt itself sends the crawler inside: the hop is refused, the host treated as having none
      '/robots.txt': { redirect: `http://127.0.0.1:${port}/robots.txt` },
    },
  };
}

export interface DripServer {
  url: string;
  host: string;
  /** robots.txt requests that arrived, and when each connection closed (ms since the epoch) */
  robots: { startedAt: number; closedAt?: number }[];
  close(): Promise<void>;
}

/**
 * A host whose robots.txt answers 200 at once and then drips one byte every `everyMs`, for ever
 * (with `drip: false`, it has no robots.txt); every other path is an ordinary page. What a
 * robots.txt deadline has to cut off.
 */
export async function startDripServer(address: string, opts: { everyMs?: number; drip?: boolean } = {}): Promise<DripServer> {
  const everyMs = opts.everyMs ?? 2000;
  const robots: DripServer['robots'] = [];
  const server = createHttpServer((req, res) => {
    if (req.url === '/robots.txt' && opts.drip === false) {
      res.writeHead(404).end();
      return;
    }
    if (req.url === '/robots.txt') {
      const entry: { startedAt: number; closedAt?: number } = { startedAt: Date.now() };
      robots.push(entry);
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.write('#');
      const t = setInterval(() => res.write('#'), everyMs);
      res.on('close', () => {
        clearInterval(t);
        entry.closedAt = Date.now();
      });
      return;
    }
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(`<title>Drip ${req.url}</title><p>an ordinary page</p>`);
  });
  await new Promise<void>((resolve) => server.listen(0, address, () => resolve()));
  const host = `${address}:${(server.address() as AddressInfo).port}`;
  return {
    url: `http://${host}`,
    host,
    robots,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}
