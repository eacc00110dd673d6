import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { CAPABILITY_HEADER, type DispatchBody, type HeartbeatBody } from '../domain/contract.ts';
import { LevelHeartbeat } from './heartbeat.ts';

const received: { headers: IncomingHttpHeaders; body: HeartbeatBody }[] = [];
let status = 202;
const server = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    received.push({ headers: req.headers, body: JSON.parse(Buffer.concat(chunks).toString('utf8')) as HeartbeatBody });
    res.writeHead(status).end('{}');
  });
});
await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

const dispatch = (over: Partial<DispatchBody> = {}): DispatchBody => ({
  crawlId: 'c1', depth: 2, orgId: 'acme', reportUrl: `${base}/report`, formats: ['wacz'], signing: false, perHostDelayMs: 0, hostParallelism: 1, notBefore: {},
  pages: [{ url: 'http://a.test/', follow: false }, { url: 'http://a.test/b', follow: false }], capability: 'cap-1', heartbeatUrl: `${base}/beat`, ...over,
});

async function until(n: number): Promise<void> {
  for (let i = 0; received.length < n; i += 1) {
    if (i > 400) throw new Error(`only ${received.length} heartbeats`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

/** The first heartbeat received that `match` accepts (a beat already on its way may still carry older state). */
async function untilBeat(match: (b: HeartbeatBody) => boolean): Promise<(typeof received)[number]> {
  for (let i = 0; ; i += 1) {
    const beat = received.find((r) => match(r.body));
    if (beat !== undefined) return beat;
    if (i > 400) throw new Error(`no matching heartbeat among ${received.length}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

afterAll(() => new Promise<void>((r) => server.close(() => r())));

afterEach(() => {
  received.length = 0;
  status = 202;
});

describe('LevelHeartbeat', () => {
  it('posts the level\'s state with the token and the capability, every interval, until stopped', async () => {
    const hb = new LevelHeartbeat(dispatch(), { auth: async () => ({ authorization: 'Bearer t0k' }), intervalMs: 20, log: () => {} });
    hb.start();
    try {
      await until(1);
      expect(received[0]!.body).toEqual({ depth: 2, pagesTotal: 2, pagesDone: 0, pagesInFlight: 0, hosts: [] });
      hb.watch(() => ({ pagesTotal: 2, pagesDone: 1, pagesInFlight: 1, hosts: [{ host: 'a.test', queued: 0, inFlight: 1, nextAllowedAt: null }] }));
      const watched = await untilBeat((b) => b.pagesDone === 1);
      expect(watched.body).toEqual({ depth: 2, pagesTotal: 2, pagesDone: 1, pagesInFlight: 1, hosts: [{ host: 'a.test', queued: 0, inFlight: 1, nextAllowedAt: null }] });
      expect(watched.headers.authorization).toBe('Bearer t0k');
      expect(watched.headers[CAPABILITY_HEADER]).toBe('cap-1');
    } finally {
      await hb.stop();
    }
    const after = received.length;
    await new Promise((r) => setTimeout(r, 80));
    expect(received.length).toBe(after);
    expect(hb.sent).toBe(after);
  });

  it('a dispatch without heartbeatUrl (an older ledger) sends nothing', async () => {
    const hb = new LevelHeartbeat(dispatch({ heartbeatUrl: undefined }), { auth: async () => ({}), intervalMs: 10, log: () => {} });
    hb.start();
    await new Promise((r) => setTimeout(r, 60));
    await hb.stop();
    expect(received).toHaveLength(0);
  });

  it('a refused heartbeat is said once, and beating goes on', async () => {
    status = 403;
    const lines: string[] = [];
    const hb = new LevelHeartbeat(dispatch(), { auth: async () => ({}), intervalMs: 10, log: (l) => lines.push(l) });
    hb.start();
    await until(4);
    await hb.stop();
    expect(lines).toEqual([`level c1/2: heartbeat answered 403 (${base}/beat)`]);
    expect(hb.sent).toBe(0);
  });
});
