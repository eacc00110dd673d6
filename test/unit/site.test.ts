// The multi-host test site (test/support/site.ts) that flow and end-to-end tests measure pacing with.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSite, type Site } from '../support/site.ts';

describe('startSite', () => {
  let site: Site;
  beforeAll(async () => {
    site = await startSite({
      hosts: {
        a: {
          robots: 'User-agent: *\nDisallow: /private\nSitemap: {{a}}/sitemap.xml\n',
          pages: {
            '/': '<a href="{{b}}/x">b</a>',
            '/go': { redirect: '{{b}}/x' },
            '/slow': { body: 'slow', delayMs: 120 },
            '/bin': { body: Buffer.from([1, 2, 3]), contentType: 'application/octet-stream', headers: { 'x-extra': 'yes' } },
            '/q?x=1': 'with query',
          },
        },
        b: { pages: { '/x': 'B' }, delayMs: 30 },
      },
    });
  });
  afterAll(() => site.close());

  it('puts each host on its own 127.0.0.x address, in order', () => {
    expect(site.hosts.a!.address).toBe('127.0.0.2');
    expect(site.hosts.b!.address).toBe('127.0.0.3');
    expect(site.hosts.a!.host).toBe(`127.0.0.2:${site.hosts.a!.port}`);
    expect(site.url('b', 'x')).toBe(`${site.hosts.b!.base}/x`);
    expect(() => site.url('zz')).toThrow(/no host zz/);
  });

  it('serves pages with {{host}} placeholders filled, robots.txt, redirects, other types, 404', async () => {
    expect(await (await fetch(site.url('a', '/'))).text()).toBe(`<a href="${site.hosts.b!.base}/x">b</a>`);
    const robots = await fetch(site.url('a', '/robots.txt'));
    expect(robots.status).toBe(200);
    expect(await robots.text()).toContain(`Sitemap: ${site.hosts.a!.base}/sitemap.xml`);
    expect((await fetch(site.url('b', '/robots.txt'))).status).toBe(404);
    const go = await fetch(site.url('a', '/go'), { redirect: 'manual' });
    expect(go.status).toBe(302);
    expect(go.headers.get('location')).toBe(`${site.hosts.b!.base}/x`);
    const bin = await fetch(site.url('a', '/bin'));
    expect(bin.headers.get('content-type')).toBe('application/octet-stream');
    expect(bin.headers.get('x-extra')).toBe('yes');
    expect([...new Uint8Array(await bin.arrayBuffer())]).toEqual([1, 2, 3]);
    expect(await (await fetch(site.url('a', '/q?x=1'))).text()).toBe('with query');
    expect((await fetch(site.url('a', '/nope'))).status).toBe(404);
  });

  it('delays responses and logs when each request arrived and finished', async () => {
    site.clearLog();
    const t = Date.now();
    await fetch(site.url('a', '/slow'), { headers: { 'user-agent': 'tester/1' } });
    await fetch(site.url('b', '/x'));
    const [slow, x] = site.log;
    expect(slow).toMatchObject({ name: 'a', path: '/slow', status: 200, userAgent: 'tester/1', aborted: false });
    expect(slow!.startedAt).toBeGreaterThanOrEqual(t);
    expect(slow!.finishedAt - slow!.startedAt).toBeGreaterThanOrEqual(120);
    expect(x!.finishedAt - x!.startedAt).toBeGreaterThanOrEqual(30);
  });

  it('measures per-host gaps without robots.txt, and how many hosts were answered at once', async () => {
    site.clearLog();
    await fetch(site.url('a', '/robots.txt'));
    await fetch(site.url('a', '/'));
    await new Promise((r) => setTimeout(r, 50));
    await fetch(site.url('a', '/'));
    expect(site.pageRequests('a')).toHaveLength(2);
    const gaps = site.gaps('a');
    expect(gaps).toHaveLength(1);
    expect(gaps[0]!.gapMs).toBeGreaterThanOrEqual(49);
    expect(site.maxConcurrentHosts()).toBe(1);
    site.clearLog();
    await Promise.all([fetch(site.url('a', '/slow')), fetch(site.url('b', '/x'))]);
    expect(site.maxConcurrentHosts()).toBe(2);
  });

  it('changes pages and robots.txt while running', async () => {
    site.setPage('b', '/new', 'fresh');
    expect(await (await fetch(site.url('b', '/new'))).text()).toBe('fresh');
    site.setPage('b', '/new', undefined);
    expect((await fetch(site.url('b', '/new'))).status).toBe(404);
    site.setRobots('b', undefined, 503);
    expect((await fetch(site.url('b', '/robots.txt'))).status).toBe(503);
    site.setRobots('b', 'User-agent: *\n');
    expect((await fetch(site.url('b', '/robots.txt'))).status).toBe(200);
  });

  it('refuses an empty site', async () => {
    await expect(startSite({ hosts: {} })).rejects.toThrow(/no hosts/);
  });
});
