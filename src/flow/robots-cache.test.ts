import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RobotsFetch } from '../domain/robots.ts';
import { startSite, type Site } from '../../test/support/site.ts';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createAddressPolicy, parseAllowlist } from '../domain/address-policy.ts';
import { createGuardedFetcher } from './fetch.ts';
import { fetchRobotsTxt, ROBOTS_CACHE_ORIGINS, RobotsCache } from './robots-cache.ts';

const fetcher = createGuardedFetcher(createAddressPolicy(parseAllowlist('127.0.0.0/8')));

describe('RobotsCache', () => {
  it('fetches once per origin while fresh, shares a fetch in progress, and fetches again after the TTL', async () => {
    let now = 1000;
    const calls: string[] = [];
    const cache = new RobotsCache(
      async (url) => {
        calls.push(url);
        return { kind: 'ok', body: 'User-agent: *\nDisallow: /x\nCrawl-delay: 2\n' } satisfies RobotsFetch;
      },
      500,
      () => now,
    );
    const [a, b] = await Promise.all([cache.get('http://h:1/a'), cache.get('http://h:1/b')]);
    expect(a).toBe(b);
    expect(calls).toEqual(['http://h:1/a']);
    expect(a.isAllowed('http://h:1/x')).toBe(false);
    expect(cache.knownCrawlDelays()).toEqual({ 'h:1': 2000 });
    await cache.get('http://h:2/');
    expect(calls).toHaveLength(2);
    now += 499;
    await cache.get('http://h:1/c');
    expect(calls).toHaveLength(2);
    now += 1;
    expect(cache.knownCrawlDelays()).toEqual({});
    await cache.get('http://h:1/c');
    expect(calls).toHaveLength(3);
  });

  it('holds at most maxOrigins, forgetting the origin asked for least recently', async () => {
    const calls: string[] = [];
    const cache = new RobotsCache(
      async (url) => {
        calls.push(new URL(url).host);
        return { kind: 'ok', body: 'User-agent: *\nDisallow: /x\n' } satisfies RobotsFetch;
      },
      60_000,
      () => 0,
      2,
    );
    await cache.get('http://a/');
    await cache.get('http://b/');
    await cache.get('http://a/again'); // a is now the most recent
    await cache.get('http://c/'); // b goes
    expect(cache.size).toBe(2);
    await cache.get('http://a/');
    await cache.get('http://c/');
    expect(calls).toEqual(['a', 'b', 'c']);
    await cache.get('http://b/');
    expect(calls).toEqual(['a', 'b', 'c', 'b']);
    expect(cache.size).toBe(2);
  });

  it('a worker meeting 5,000 origins holds 1,000 of them (ROBOTS_CACHE_ORIGINS)', async () => {
    expect(ROBOTS_CACHE_ORIGINS).toBe(1000);
    const cache = new RobotsCache(async () => ({ kind: 'unavailable', status: 404 }) satisfies RobotsFetch, 60_000);
    for (let i = 0; i < 5000; i++) await cache.get(`http://h${i}.test/`);
    expect(cache.size).toBe(1000);
  });
});

describe('fetchRobotsTxt against a real server', () => {
  let site: Site;
  beforeAll(async () => {
    site = await startSite({
      hosts: {
        ok: { robots: 'User-agent: *\nDisallow: /no\n', pages: {} },
        missing: { pages: {} },
        down: { robotsStatus: 503, pages: {} },
        moved: { pages: { '/robots.txt': { redirect: '{{ok}}/robots.txt' } } },
      },
    });
  });
  afterAll(() => site.close());

  it('reads a 200, treats 4xx as no rules and 5xx as unreachable, follows a redirect', async () => {
    expect(await fetchRobotsTxt(fetcher, site.url('ok', '/a'), 'ua')).toEqual({ kind: 'ok', body: 'User-agent: *\nDisallow: /no\n' });
    expect(await fetchRobotsTxt(fetcher, site.url('missing', '/a'), 'ua')).toEqual({ kind: 'unavailable', status: 404 });
    expect(await fetchRobotsTxt(fetcher, site.url('down', '/a'), 'ua')).toMatchObject({ kind: 'unreachable', status: 503 });
    expect(site.log.filter((r) => r.name === 'ok').map((r) => r.userAgent)).toEqual(['ua']);
    expect(await fetchRobotsTxt(fetcher, site.url('moved', '/a'), 'ua')).toEqual({ kind: 'ok', body: 'User-agent: *\nDisallow: /no\n' });
  });
  it('does not disallow a host that cannot be reached at all (its capture fails instead)', async () => {
    expect(await fetchRobotsTxt(fetcher, 'http://127.0.0.2:1/a', 'ua')).toEqual({ kind: 'unavailable', status: 0 });
  });
});

describe('fetchRobotsTxt under the address policy and its deadline', () => {
  let drip: Server;
  let dripUrl: string;
  beforeAll(async () => {
    // answers at once, then sends one byte of robots.txt a second, for ever
    drip = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain' });
      const t = setInterval(() => res.write('#'), 1000);
      res.on('close', () => clearInterval(t));
    });
    await new Promise<void>((r) => drip.listen(0, '127.0.0.2', r));
    dripUrl = `http://127.0.0.2:${(drip.address() as AddressInfo).port}/page`;
  });
  afterAll(async () => {
    drip.closeAllConnections();
    await new Promise((r) => drip.close(r));
  });

  it('is refused, with nothing sent, for a host outside the policy', async () => {
    const strict = createGuardedFetcher(createAddressPolicy());
    const got = await fetchRobotsTxt(strict, dripUrl, 'ua');
    expect(got.kind).toBe('refused');
    expect(got.kind === 'refused' && got.reason).toContain('loopback');
  });

  it('gives up on a robots.txt that drips, at its overall deadline, as if there were none', async () => {
    const started = Date.now();
    expect(await fetchRobotsTxt(fetcher, dripUrl, 'ua', 1500)).toEqual({ kind: 'unavailable', status: 0 });
    const took = Date.now() - started;
    expect(took).toBeGreaterThanOrEqual(1400);
    expect(took).toBeLessThan(10_000);
  });
});
