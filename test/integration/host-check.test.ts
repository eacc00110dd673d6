// DNS rebinding (issue 29, deliver 6): a page that points a name of its own at 127.0.0.1 sends its
// requests with that name in Host. The API, the dev issuer and replay answer it 421 and do
// nothing: no crawl started, no identity's data read, no token minted, no archive fetched.
import { createServer, type AddressInfo, type Server } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startIssuer, type RunningIssuer } from '../../src/issuer/issuer.ts';
import { buildReplayServer } from '../../src/replay/server.ts';
import { devHeaders } from '../support/api.ts';
import { crawlCount } from '../support/crawl-rows.ts';
import { useHarness } from '../support/harness.ts';
import { rawRequest } from '../support/raw-http.ts';

const ORG = 'acme';
const ATTACKER = 'attacker.test';
const h = useHarness({ crawls: 'stub', grants: [['alice', 'submitter', ORG]] });

const portOf = (url: string): string => new URL(url).port;

describe('the API', () => {
  const startCrawl = (host: string) =>
    rawRequest(h.api.url, {
      method: 'POST',
      path: '/api/crawls',
      headers: { ...devHeaders('alice', [ORG]), 'content-type': 'application/json', host },
      body: JSON.stringify({ seeds: ['http://a.test/'], maxDepth: 0 }),
    });

  it('answers Host: attacker.test with 421 and starts no crawl; its own name starts one', async () => {
    const before = await crawlCount(h.tdb.db);
    const refused = await startCrawl(ATTACKER);
    expect(refused.status).toBe(421);
    expect(JSON.parse(refused.body)).toEqual({ error: `misdirected request: this server does not answer for the host "${ATTACKER}"` });
    expect(await crawlCount(h.tdb.db)).toBe(before);
    expect(h.hook.dispatches).toHaveLength(0);

    const started = await startCrawl(`localhost:${portOf(h.api.url)}`);
    expect(started.status).toBe(202);
    expect(await crawlCount(h.tdb.db)).toBe(before + 1);
  });

  it('gives nothing of the dev identity to another host name, on any port', async () => {
    for (const host of [ATTACKER, `${ATTACKER}:${portOf(h.api.url)}`, `127.0.0.1:${Number(portOf(h.api.url)) + 1}`]) {
      const res = await rawRequest(h.api.url, { path: '/api/me', headers: { ...devHeaders('alice', [ORG]), host } });
      expect(res.status, host).toBe(421);
      expect(res.body).not.toContain('alice');
    }
    const own = await rawRequest(h.api.url, { path: '/api/me', headers: { ...devHeaders('alice', [ORG]), host: `127.0.0.1:${portOf(h.api.url)}` } });
    expect(own.status).toBe(200);
    expect(own.body).toContain('alice');
  });

  it('answers an unknown path for another host 421, not 404', async () => {
    expect((await rawRequest(h.api.url, { path: '/nothing-here', headers: { host: ATTACKER } })).status).toBe(421);
  });
});

describe('the dev issuer', () => {
  let issuer: RunningIssuer;
  let named: RunningIssuer;
  beforeAll(async () => {
    issuer = await startIssuer({ port: 0 });
    // reachable under a name of its own too: discovery answers there, tokens do not
    named = await startIssuer({ port: 0, issuerUrl: 'http://issuer.test:7071' });
  });
  afterAll(async () => {
    await issuer?.close();
    await named?.close();
  });

  const mint = (base: string, host: string) =>
    rawRequest(base, {
      method: 'POST',
      path: '/token',
      headers: { 'content-type': 'application/json', host },
      body: JSON.stringify({ subject: 'mallory', organizations: [ORG] }),
    });

  it('mints no token for Host: attacker.test (421), and one for its loopback address', async () => {
    const refused = await mint(issuer.url, ATTACKER);
    expect(refused.status).toBe(421);
    expect(refused.body).not.toContain('access_token');
    const discovery = await rawRequest(issuer.url, { path: '/.well-known/openid-configuration', headers: { host: ATTACKER } });
    expect(discovery.status).toBe(421);

    const minted = await mint(issuer.url, `127.0.0.1:${portOf(issuer.url)}`);
    expect(minted.status).toBe(200);
    expect(JSON.parse(minted.body)).toHaveProperty('access_token');
  });

  it('answers discovery at its configured URL’s name, but mints tokens only at its loopback address', async () => {
    const base = `http://127.0.0.1:${(named.app.server.address() as AddressInfo).port}`;
    const discovery = await rawRequest(base, { path: '/.well-known/openid-configuration', headers: { host: 'issuer.test:7071' } });
    expect(discovery.status).toBe(200);
    const refused = await mint(base, 'issuer.test:7071');
    expect(refused.status).toBe(421);
    expect(refused.body).not.toContain('access_token');
    expect((await mint(base, `localhost:${portOf(base)}`)).status).toBe(200);
  });
});

describe('replay', () => {
  let bucketListener: Server;
  let connections = 0;
  let base: string;
  let replay: Awaited<ReturnType<typeof buildReplayServer>>;
  beforeAll(async () => {
    // the "bucket": any connection to it means replay fetched an archive for the request
    bucketListener = createServer((socket) => {
      connections++;
      socket.destroy();
    });
    await new Promise<void>((resolve) => bucketListener.listen(0, '127.0.0.1', resolve));
    const port = (bucketListener.address() as { port: number }).port;
    replay = await buildReplayServer({ endpoint: `http://127.0.0.1:${port}`, bucket: 'captures', publicUrls: ['http://replay.test:8899'] });
    base = await replay.listen({ host: '127.0.0.1', port: 0 });
  });
  afterAll(async () => {
    await replay?.close();
    await new Promise((resolve) => bucketListener?.close(resolve));
  });

  const archive = (host: string) => rawRequest(base, { path: '/wacz/a/b.wacz?X-Amz-Signature=abc', headers: { host } });

  it('answers Host: attacker.test with 421: no app, and no archive fetched', async () => {
    const app = await rawRequest(base, { path: '/?source=/wacz/a/b.wacz', headers: { host: ATTACKER } });
    expect(app.status).toBe(421);
    expect(app.body).not.toContain('<replay-app-main>');
    expect((await archive(ATTACKER)).status).toBe(421);
    expect(connections).toBe(0);
  });

  it('serves its own names: the loopback address and its public URL (the oracle sees that fetch)', async () => {
    const app = await rawRequest(base, { path: '/', headers: { host: 'replay.test:8899' } });
    expect(app.status).toBe(200);
    expect(app.body).toContain('<replay-app-main>');
    expect((await archive(`127.0.0.1:${portOf(base)}`)).status).toBe(502);
    expect(connections).toBe(1);
  });
});
