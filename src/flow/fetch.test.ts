// The guarded fetcher against real sockets: what the address policy refuses never reaches the
// listener on 127.0.0.1 (not even a TCP handshake), and what it allows goes over the wire intact.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startListener, listenerUrls, type Listener } from '../../test/support/hostile-site.ts';
import { createAddressPolicy, parseAllowlist } from '../domain/address-policy.ts';
import { ByteBudget } from '../domain/byte-budget.ts';
import { createGuardedFetcher, fetchFollowing, FetchError, type Resolver } from './fetch.ts';

const policy = createAddressPolicy(parseAllowlist('127.0.0.2/32'));

let listener: Listener;
let site: Server;
let siteUrl: string;
const seen: { method: string; url: string; headers: Record<string, unknown>; body: string }[] = [];

beforeAll(async () => {
  listener = await startListener();
  site = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      seen.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks).toString() });
      if (req.url === '/to-listener') res.writeHead(302, { location: `http://127.0.0.1:${listener.port}/x` }).end();
      else if (req.url === '/big') res.end('x'.repeat(5000));
      else if (req.url?.startsWith('/700k')) res.end(Buffer.alloc(700 * 1024, 0x61));
      else if (req.url === '/drip') {
        res.writeHead(200);
        const t = setInterval(() => res.write('.'), 200);
        res.on('close', () => clearInterval(t));
      } else res.writeHead(200, { 'content-type': 'text/plain', 'x-twice': ['a', 'b'] }).end(`hello ${req.url}`);
    });
  });
  await new Promise<void>((r) => site.listen(0, '127.0.0.2', r));
  siteUrl = `http://127.0.0.2:${(site.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await listener.close();
  site.closeAllConnections();
  await new Promise((r) => site.close(r));
});

async function refusal(p: Promise<unknown>): Promise<FetchError> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(FetchError);
  expect((err as FetchError).type).toBe('refused');
  return err as FetchError;
}

describe('createGuardedFetcher', () => {
  const get = (url: string) => ({ url, method: 'GET', headers: [['User-Agent', 'ua']] as [string, string][] });

  it('refuses every spelling of the listener without connecting to it', async () => {
    const fetcher = createGuardedFetcher(policy, { resolve: async () => ['127.0.0.1'] });
    for (const [name, url] of Object.entries(listenerUrls(listener.port))) {
      const err = await refusal(fetcher(get(url)));
      expect(err.message, name).toMatch(/address refused/);
    }
    expect(listener.connections).toEqual([]);
  });

  it('refuses a name that resolves inside, and connects only to the allowed one of several addresses', async () => {
    const inside = createGuardedFetcher(policy, { resolve: async () => ['127.0.0.1', '::1'] });
    const err = await refusal(inside(get('http://inside.example/')));
    expect(err.message).toContain('inside.example → 127.0.0.1');
    // port 80 on a name: only the allowlisted 127.0.0.2 may be used (nothing listens there on 80)
    const mixed = createGuardedFetcher(createAddressPolicy(parseAllowlist(`127.0.0.2/32`)), { resolve: async () => ['127.0.0.1', '127.0.0.2'] });
    const e2 = await mixed(get('http://mixed.example/')).then(
      () => undefined,
      (e: unknown) => e as FetchError,
    );
    expect(e2?.type).toBe('network');
    expect(listener.connections).toEqual([]);
  });

  it('a name that rebinds to 127.0.0.1 on the second lookup is refused on the second fetch', async () => {
    const port = new URL(siteUrl).port;
    let lookups = 0;
    const rebinding: Resolver = async () => (++lookups === 1 ? ['127.0.0.2'] : ['127.0.0.1']);
    const fetcher = createGuardedFetcher(policy, { resolve: rebinding });
    const first = await fetcher(get(`http://rebind.example:${port}/b`));
    expect(first.response.body.toString()).toBe('hello /b');
    expect(first.ip).toBe('127.0.0.2');
    const err = await refusal(fetcher(get(`http://rebind.example:${port}/c`)));
    expect(err.message).toContain('rebind.example → 127.0.0.1');
    expect(lookups).toBe(2);
    expect(listener.connections).toEqual([]);
  });

  it('sends the method, headers and body, and records the exchange as it went', async () => {
    const fetcher = createGuardedFetcher(policy);
    const x = await fetcher({
      url: `${siteUrl}/post?q=1#frag`,
      method: 'POST',
      headers: [
        ['User-Agent', 'ua'],
        ['Content-Type', 'text/plain'],
        ['X-Multi', 'a'],
        ['X-Multi', 'b'],
      ],
      body: Buffer.from('payload'),
    });
    const got = seen.at(-1)!;
    expect(got).toMatchObject({ method: 'POST', url: '/post?q=1', body: 'payload' });
    expect(got.headers['x-multi']).toBe('a, b');
    expect(got.headers.host).toBe(new URL(siteUrl).host);
    expect(x.request).toMatchObject({ method: 'POST', target: '/post?q=1' });
    expect(x.request.headers[0]).toEqual(['Host', new URL(siteUrl).host]);
    expect(x.response.status).toBe(200);
    expect(x.response.body.toString()).toBe('hello /post?q=1');
    expect(x.response.headers.filter(([k]) => k === 'x-twice')).toEqual([
      ['x-twice', 'a'],
      ['x-twice', 'b'],
    ]);
    expect(x.url).toBe(`${siteUrl}/post?q=1`);
  });

  it('bounds the body and the whole exchange', async () => {
    const fetcher = createGuardedFetcher(policy);
    const big = await fetcher(get(`${siteUrl}/big`), { maxBytes: 1000 }).then(
      () => undefined,
      (e: unknown) => e as FetchError,
    );
    expect(big?.type).toBe('too-large');
    const started = Date.now();
    const drip = await fetcher(get(`${siteUrl}/drip`), { timeoutMs: 800 }).then(
      () => undefined,
      (e: unknown) => e as FetchError,
    );
    expect(drip?.type).toBe('network');
    expect(drip?.message).toContain('within 800 ms');
    expect(Date.now() - started).toBeLessThan(5000);
  });

  it('a budget shared by fetches in flight bounds what they hold together: a body that would cross it fails, and a failed one gives its bytes back', async () => {
    const fetcher = createGuardedFetcher(policy);
    const budget = new ByteBudget(1024 * 1024);
    const both = await Promise.allSettled([fetcher(get(`${siteUrl}/700k-a`), { budget }), fetcher(get(`${siteUrl}/700k-b`), { budget })]);
    const delivered = both.filter((r) => r.status === 'fulfilled');
    const failed = both.filter((r) => r.status === 'rejected');
    expect(delivered).toHaveLength(1);
    expect(delivered[0]!.value.response.body.length).toBe(700 * 1024);
    expect(failed).toHaveLength(1);
    expect(failed[0]!.reason).toMatchObject({ type: 'too-large', message: expect.stringContaining(`budget of ${1024 * 1024} bytes`) });
    // the delivered body stays taken (the caller keeps it or gives it back); the failed one gave its part back
    expect(budget.taken).toBe(700 * 1024);
    budget.give(700 * 1024);
    const dripped = await fetcher(get(`${siteUrl}/drip`), { budget, timeoutMs: 700 }).then(
      () => undefined,
      (e: unknown) => e as FetchError,
    );
    expect(dripped?.type).toBe('network');
    expect(budget.taken).toBe(0);
  });

  it('bounds the name lookup by the same timeout: a resolver that never answers fails the fetch at it, and nothing is connected to', async () => {
    let asked = 0;
    const fetcher = createGuardedFetcher(policy, {
      resolve: () => {
        asked += 1;
        return new Promise<string[]>(() => {});
      },
    });
    const err = await fetcher(get(`http://never.answers.test:${listener.port}/`), { timeoutMs: 300 }).then(
      () => undefined,
      (e: unknown) => e as FetchError,
    );
    expect([asked, err?.type, err?.message]).toEqual([1, 'network', 'no complete answer from never.answers.test:' + listener.port + ' within 300 ms']);
    expect(listener.connections).toEqual([]);
  });

  it('checks every redirect hop: a redirect to the listener is refused before connecting', async () => {
    const fetcher = createGuardedFetcher(policy);
    const err = await refusal(fetchFollowing(fetcher, `${siteUrl}/to-listener`, { userAgent: 'ua' }));
    expect(err.message).toContain(`127.0.0.1:${listener.port}`);
    expect(listener.connections).toEqual([]);
  });

  it('the listener does see a connection the policy lets through (so its silence above means something)', async () => {
    // not on 127.0.0.1: that is the stack's own address, which no entry opens
    const other = await startListener('127.0.0.46');
    try {
      const fetcher = createGuardedFetcher(createAddressPolicy(parseAllowlist(`127.0.0.46:${other.port}`)));
      const x = await fetcher(get(`http://127.0.0.46:${other.port}/through`));
      expect(x.response.body.toString()).toBe('<title>internal secret</title>');
      expect(other.connections).toHaveLength(1);
      expect(other.connections[0]!.firstBytes).toMatch(/^GET \/through HTTP\/1\.1\r\n/);
    } finally {
      await other.close();
    }
  });
});
