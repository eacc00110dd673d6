// harness: not used because it tests the reference capture flow alone, against a test site and a report receiver of its own, with no ledger.
// The reference capture flow against the real SeaweedFS S3 and the real dev issuer, capturing a
// real multi-host test site. The report receiver is a plain test HTTP server that records what
// the flow sends (the ledger's own report route is tested with the crawl end to end).
import { randomUUID } from 'node:crypto';
import { HeadObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { createRemoteJWKSet, jwtVerify } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Config } from '../../src/config/env.ts';
import { ERROR_TYPE_CANCELLED } from '../../src/domain/contract.ts';
import type { DispatchBody, LevelReportBody, LinksArtifact, Manifest, PageReport } from '../../src/domain/contract.ts';
import { pacingViolations } from '../../src/domain/pacing.ts';
import { readWacz, waczProblems } from '../../src/domain/wacz/read.ts';
import { startFlow, type Flow } from '../../src/flow/server.ts';
import { testFlowOptions } from '../support/flow.ts';
import { flowAloneConfig, getObjectBytes } from '../support/flow-alone.ts';
import { rawRequest } from '../support/raw-http.ts';
import { startIssuer, type RunningIssuer } from '../../src/issuer/issuer.ts';
import { createS3 } from '../../src/s3/client.ts';
import { TEST_FLOW_CLIENT_SECRET } from '../support/api.ts';
import { pageTaskId } from '../../src/flow/resume.ts';
import { dispatchTo, startReceiver, type Received } from '../support/report-receiver.ts';
import { startSite, type Site } from '../support/site.ts';

const TOKEN = 'flow-test-webhook-token';

let config: Config;
let s3: S3Client;
let issuer: RunningIssuer;
let receiver: Awaited<ReturnType<typeof startReceiver>>;
let flow: Flow;
const sites: Site[] = [];

beforeAll(async () => {
  // the flow needs no OpenFGA; placeholders satisfy loadConfig
  const base = flowAloneConfig(TOKEN);
  issuer = await startIssuer({ port: 0, flowClientSecret: TEST_FLOW_CLIENT_SECRET });
  config = {
    ...base,
    identity: { mode: 'oidc', issuer: issuer.url, audience: issuer.audience, devIdentityAlsoSet: false, flowClientSecret: TEST_FLOW_CLIENT_SECRET },
  };
  s3 = createS3(config.s3);
  receiver = await startReceiver();
  flow = await startFlow({ ...testFlowOptions(config), port: 0, reportRetry: { attempts: 4, baseDelayMs: 50 } });
});

afterAll(async () => {
  await flow?.close();
  await receiver?.close();
  await issuer?.close();
  await Promise.all(sites.map((s) => s.close()));
});

async function site(hosts: Parameters<typeof startSite>[0]['hosts']): Promise<Site> {
  const s = await startSite({ hosts });
  sites.push(s);
  return s;
}

function dispatchBody(over: Partial<DispatchBody> & Pick<DispatchBody, 'pages'>): DispatchBody {
  return dispatchTo(receiver.url, { ...over });
}

async function dispatch(body: unknown, opts: { token?: string | null; query?: string } = {}): Promise<Response> {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (opts.token !== null) headers.authorization = `Bearer ${opts.token ?? TOKEN}`;
  return fetch(`${flow.webhookUrl}${opts.query ?? ''}`, { method: 'POST', headers, body: JSON.stringify(body) });
}

/** Dispatches, expects 202, waits for the level to settle, returns the report the receiver got. */
async function runLevel(body: DispatchBody, query = ''): Promise<{ report: LevelReportBody; received: Received }> {
  const res = await dispatch(body, { query });
  expect(res.status).toBe(202);
  const run = await flow.waitForLevel(body.crawlId, body.depth, 60_000);
  expect(run.state).toBe('reported');
  const got = receiver.received.filter((r) => r.path === `/api/crawls/${body.crawlId}/levels/${body.depth}`);
  expect(got).toHaveLength(1);
  return { report: got[0]!.body, received: got[0]! };
}

const getObject = (key: string): Promise<Buffer> => getObjectBytes(s3, config.s3.bucket, key);

async function exists(key: string): Promise<boolean> {
  try {
    await s3.send(new HeadObjectCommand({ Bucket: config.s3.bucket, Key: key }));
    return true;
  } catch (err) {
    if ((err as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode === 404) return false;
    throw err;
  }
}

async function manifestOf(p: PageReport): Promise<Manifest> {
  expect(p.manifestKey).toBeDefined();
  return JSON.parse((await getObject(p.manifestKey!)).toString('utf8')) as Manifest;
}

const byUrl = (report: LevelReportBody, url: string): PageReport => {
  const p = report.pages.find((x) => x.url === url);
  if (p === undefined) throw new Error(`no page ${url} in the report`);
  return p;
};

describe('POST /crawl: the webhook', () => {
  it('answers 401 without the token or with another one; /health needs none', async () => {
    const body = dispatchBody({ pages: [] });
    expect((await dispatch(body, { token: null })).status).toBe(401);
    const wrong = await dispatch(body, { token: 'not-the-token' });
    expect(wrong.status).toBe(401);
    expect(await wrong.json()).toEqual({ error: 'unauthenticated' });
    expect((await fetch(`${flow.url}/health`)).status).toBe(200);
    expect((await fetch(`${flow.url}/hosts`)).status).toBe(401);
    expect(flow.level(body.crawlId, 0)).toBeUndefined();
  });

  it('answers 421 to a Host it does not listen on (DNS rebinding) and starts nothing', async () => {
    const body = dispatchBody({ pages: [{ url: 'http://127.0.0.2:1/never', follow: false }] });
    const post = (host: string, payload: string) =>
      rawRequest(flow.url, {
        method: 'POST',
        path: '/crawl',
        body: payload,
        headers: { host, authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
      });
    const res = await post('attacker.test', JSON.stringify(body));
    expect(res.status).toBe(421);
    expect(flow.level(body.crawlId, 0)).toBeUndefined();
    // the same request with the receiver's own name gets as far as the body check
    expect((await post(`127.0.0.1:${flow.port}`, '{}')).status).toBe(400);
  });

  it('answers 400 to a body that is not a DispatchBody, naming what is wrong', async () => {
    const good = dispatchBody({ pages: [{ url: 'http://127.0.0.2:1/', follow: true }] });
    const cases: [unknown, RegExp][] = [
      [{ ...good, pages: undefined }, /pages/],
      [{ ...good, extra: 1 }, /additional/],
      [{ ...good, depth: -1 }, /depth/],
      [{ ...good, depth: '1' }, /depth/],
      [{ ...good, formats: ['gif'] }, /formats/],
      [{ ...good, hostParallelism: 0 }, /hostParallelism/],
      [{ ...good, pages: [{ url: 'ftp://x/', follow: true }] }, /http\(s\)/],
      [{ ...good, pages: [{ url: 'http://x/' }] }, /follow/],
      [{ ...good, notBefore: { 'x:1': 'yesterday' } }, /notBefore/],
      [{ ...good, reportUrl: 'not a url' }, /reportUrl/],
    ];
    for (const [body, detail] of cases) {
      const res = await dispatch(body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(JSON.stringify(await res.json())).toMatch(detail);
    }
    expect(flow.level(good.crawlId, 0)).toBeUndefined();
  });

  it('answers 400 to an unknown knob in the query string', async () => {
    const res = await dispatch(dispatchBody({ pages: [] }), { query: '?bogus=1' });
    expect(res.status).toBe(400);
    expect((await res.json()).error).toMatch(/unknown knob "bogus"/);
  });
});

describe('capturing a level', () => {
  let s: Site;
  let body: DispatchBody;
  let report: LevelReportBody;
  let received: Received;
  const DELAY = 250;

  beforeAll(async () => {
    s = await site({
      a: {
        robots: 'User-agent: *\nDisallow: /private\n',
        delayMs: 30,
        pages: {
          '/': '<html><head><title>Home of A</title><script>var hidden = "script text"</script></head><body><h1>Welcome</h1><p>Visible words here.</p><a href="/x">x</a> <a href="/p" rel="nofollow">p</a> <a href="#frag">f</a> <a href="{{b}}/">b</a><a href="/private">priv</a></body></html>',
          '/x': '<title>X</title><p>x page</p><a href="/">home</a>',
          '/y': '<title>Y</title><p>y page</p>',
          '/private': '<title>Secret</title>',
          '/go': { redirect: '{{e}}/landing' },
        },
      },
      b: {
        delayMs: 30,
        pages: {
          '/': '<title>B</title><p>b home</p>',
          '/doc.pdf': { body: Buffer.from('%PDF-1.4'), contentType: 'application/pdf' },
          '/na': '<html><head><title>No archive</title><meta name="robots" content="noarchive"></head><body><p>keep out</p></body></html>',
        },
      },
      c: { pages: { '/': '<title>C</title><p>c</p>', '/c2': '<title>C2</title>' } },
      e: { pages: { '/landing': '<title>Landed</title><p>after the redirect</p><a href="/next" rel="next">n</a>' } },
    });
    body = dispatchBody({
      perHostDelayMs: DELAY,
      hostParallelism: 2,
      pages: [
        { url: s.url('a', '/'), follow: true },
        { url: s.url('a', '/x'), follow: false },
        { url: s.url('a', '/private'), follow: true },
        { url: s.url('a', '/y'), follow: true },
        { url: s.url('a', '/go'), follow: true },
        { url: s.url('b', '/'), follow: true },
        { url: s.url('b', '/doc.pdf'), follow: true },
        { url: s.url('b', '/missing'), follow: true },
        { url: s.url('b', '/na'), follow: true },
        { url: s.url('c', '/'), follow: true },
        { url: s.url('c', '/c2'), follow: true },
      ],
    });
    ({ report, received } = await runLevel(body));
  }, 60_000);

  it('reports every page, in order, with the depth', () => {
    expect(report.depth).toBe(0);
    expect(report.pages.map((p) => [p.url, p.status])).toEqual([
      [s.url('a', '/'), 'captured'],
      [s.url('a', '/x'), 'captured'],
      [s.url('a', '/private'), 'skipped'],
      [s.url('a', '/y'), 'captured'],
      [s.url('a', '/go'), 'captured'],
      [s.url('b', '/'), 'captured'],
      [s.url('b', '/doc.pdf'), 'failed'],
      [s.url('b', '/missing'), 'failed'],
      [s.url('b', '/na'), 'captured'],
      [s.url('c', '/'), 'captured'],
      [s.url('c', '/c2'), 'captured'],
    ]);
  });

  it('authenticates the report with the JWT the issuer grants the flow for its secret: subject capture-flow, no organization', async () => {
    const auth = received.headers.authorization ?? '';
    expect(auth).toMatch(/^Bearer ey/);
    const jwks = createRemoteJWKSet(new URL(`${issuer.url}/jwks.json`));
    const { payload } = await jwtVerify(auth.slice('Bearer '.length), jwks, { issuer: issuer.url, audience: issuer.audience });
    expect(payload.sub).toBe('capture-flow');
    expect(payload.organizations).toEqual([]);
  });

  it('gives each capture a task id and a manifest at exactly the reported key', async () => {
    const captured = report.pages.filter((p) => p.status !== 'skipped');
    expect(new Set(captured.map((p) => p.taskId)).size).toBe(captured.length);
    for (const p of captured) {
      // derived from crawl, level and URL (src/flow/resume.ts): a re-dispatch finds the same key
      expect(p.taskId).toBe(pageTaskId(body.crawlId, 0, p.url));
      expect(p.manifestKey).toBe(`captures/${body.crawlId}/0/${p.taskId}.result.json`);
      expect(p.manifestError).toBeUndefined();
      expect(Date.parse(p.submittedAt!)).toBeLessThanOrEqual(Date.parse(p.finishedAt!));
      const m = await manifestOf(p);
      expect(m.taskId).toBe(p.taskId);
      expect(m.url).toBe(p.url);
      expect(m.software).toMatch(/^capture-ledger-capture-worker\/\S+ \(test-capture-worker-\d+\)$/);
      expect(m.startedAt).toBe(p.submittedAt);
      expect(m.finishedAt).toBe(p.finishedAt);
      expect(m.status).toBe(p.status === 'captured' ? 'succeeded' : 'failed');
      for (const a of m.artifacts) {
        expect(a.bucket).toBe(config.s3.bucket);
        expect(a.key.startsWith(`captures/${body.crawlId}/0/${p.taskId}.`)).toBe(true);
        const obj = await getObject(a.key);
        expect(obj.length).toBe(a.size);
        expect((await import('node:crypto')).createHash('sha256').update(obj).digest('hex')).toBe(a.sha256);
      }
    }
  });

  it('writes a real WACZ whose pages.jsonl has the title and the visible text', async () => {
    const home = byUrl(report, s.url('a', '/'));
    const m = await manifestOf(home);
    const art = m.artifacts.find((a) => a.format === 'wacz')!;
    expect(art.key).toBe(`captures/${body.crawlId}/0/${home.taskId}.wacz`);
    const w = await readWacz(await getObject(art.key));
    expect(waczProblems(w)).toEqual([]);
    expect(w.pages).toHaveLength(1);
    expect(w.pages[0]).toMatchObject({ url: s.url('a', '/'), title: 'Home of A' });
    expect(w.pages[0]!.text).toContain('Welcome');
    expect(w.pages[0]!.text).toContain('Visible words here.');
    expect(w.pages[0]!.text).not.toContain('script text');
    const responses = w.records.filter((r) => r.headers['WARC-Type'] === 'response');
    expect(responses.map((r) => r.headers['WARC-Target-URI'])).toEqual([s.url('a', '/')]);
    expect(w.cdx.map((c) => c.url)).toEqual([s.url('a', '/')]);
    expect(m.finalUrl).toBe(s.url('a', '/'));
  });

  it('writes the links artifact for follow pages: every <a href>, absolute, with rel as found', async () => {
    const home = byUrl(report, s.url('a', '/'));
    const m = await manifestOf(home);
    const art = m.artifacts.find((a) => a.format === 'links');
    expect(art?.key).toBe(`captures/${body.crawlId}/0/${home.taskId}.links.json`);
    const links = JSON.parse((await getObject(art!.key)).toString('utf8')) as LinksArtifact;
    expect(links.url).toBe(s.url('a', '/'));
    expect(links.finalUrl).toBe(s.url('a', '/'));
    expect(links.links).toEqual([
      { href: s.url('a', '/x') },
      { href: s.url('a', '/p'), rel: 'nofollow' },
      { href: s.url('a', '/#frag') },
      { href: s.url('b', '/') },
      { href: s.url('a', '/private') },
    ]);
    // a page that is not follow gets no links artifact
    const x = await manifestOf(byUrl(report, s.url('a', '/x')));
    expect(x.artifacts.map((a) => a.format)).toEqual(['wacz']);
  });

  it('follows redirects, to another host too: finalUrl recorded, every hop in the WARC, links resolved against the final URL', async () => {
    const go = byUrl(report, s.url('a', '/go'));
    expect(go.finalUrl).toBe(s.url('e', '/landing'));
    const m = await manifestOf(go);
    expect(m.finalUrl).toBe(s.url('e', '/landing'));
    const w = await readWacz(await getObject(m.artifacts.find((a) => a.format === 'wacz')!.key));
    expect(w.records.filter((r) => r.headers['WARC-Type'] === 'response').map((r) => r.headers['WARC-Target-URI'])).toEqual([
      s.url('a', '/go'),
      s.url('e', '/landing'),
    ]);
    expect(w.pages[0]).toMatchObject({ url: s.url('a', '/go'), title: 'Landed', text: 'after the redirect\n\nn' });
    const links = JSON.parse((await getObject(m.artifacts.find((a) => a.format === 'links')!.key)).toString('utf8')) as LinksArtifact;
    expect(links).toEqual({ url: s.url('a', '/go'), finalUrl: s.url('e', '/landing'), links: [{ href: s.url('e', '/next'), rel: 'next' }] });
  });

  it('honours robots.txt Disallow: skipped with reason robots, no task, and the page is never requested', () => {
    const p = byUrl(report, s.url('a', '/private'));
    expect(p).toEqual({ url: s.url('a', '/private'), status: 'skipped', skipReason: 'robots' });
    expect(s.log.filter((r) => r.path === '/private')).toEqual([]);
    expect(s.log.filter((r) => r.name === 'a' && r.path === '/robots.txt')).toHaveLength(1);
  });

  it('fails a non-HTML page and a 404 with a manifest saying so and no artifacts', async () => {
    const pdf = byUrl(report, s.url('b', '/doc.pdf'));
    const mp = await manifestOf(pdf);
    expect(mp).toMatchObject({ status: 'failed', artifacts: [], error: { type: 'ERROR_TYPE_CONTENT_TYPE' } });
    expect(mp.error!.message).toMatch(/application\/pdf/);
    const missing = byUrl(report, s.url('b', '/missing'));
    expect(await manifestOf(missing)).toMatchObject({ status: 'failed', artifacts: [], error: { type: 'ERROR_TYPE_HTTP_STATUS' } });
    expect(await exists(`captures/${body.crawlId}/0/${pdf.taskId}.wacz`)).toBe(false);
  });

  it('withholds the text of a noarchive page and says so (documentWithheld, textWithheld)', async () => {
    const m = await manifestOf(byUrl(report, s.url('b', '/na')));
    expect(m.status).toBe('succeeded');
    expect(m.documentWithheld).toBe('no-archive');
    const w = await readWacz(await getObject(m.artifacts.find((a) => a.format === 'wacz')!.key));
    expect(w.pages[0]).toMatchObject({ title: 'No archive', text: '', textWithheld: 'no-archive' });
  });

  it('paces each host from the finish of the previous capture, as the site felt it and as reported', () => {
    for (const name of ['a', 'b', 'c']) {
      const gaps = s.gaps(name);
      expect(gaps.length).toBeGreaterThan(0);
      for (const g of gaps) expect(g.gapMs, `${name}: ${g.prev.path} → ${g.next.path}`).toBeGreaterThanOrEqual(DELAY);
    }
    // the timestamps in the report obey the rules too (the spec's pacing query over crawl_pages)
    const captures = report.pages
      .filter((p) => p.submittedAt !== undefined)
      .map((p) => ({ host: new URL(p.url).host, start: Date.parse(p.submittedAt!), finish: Date.parse(p.finishedAt!) }));
    expect(pacingViolations(captures, { perHostDelayMs: DELAY, hostParallelism: 2 })).toEqual([]);
    // and the flow's own record agrees with the report
    for (const p of report.pages.filter((x) => x.taskId !== undefined)) {
      const rec = flow.hostLog.get(new URL(p.url).host).find((c) => c.taskId === p.taskId)!;
      expect(new Date(rec.submittedAt).toISOString()).toBe(p.submittedAt);
      expect(new Date(rec.finishedAt).toISOString()).toBe(p.finishedAt);
    }
  });

  it('never has more than hostParallelism hosts in flight, and uses both slots', () => {
    // as the site felt it (a browser capture's requests are short next to the capture, so two
    // hosts' requests need not overlap on the wire) ...
    expect(s.maxConcurrentHosts()).toBeLessThanOrEqual(2);
    // ... and as the captures ran, submit to finish
    const spans = report.pages
      .filter((p) => p.submittedAt !== undefined)
      .map((p) => ({ host: new URL(p.url).host, start: Date.parse(p.submittedAt!), finish: Date.parse(p.finishedAt!) }));
    const inFlightAt = (t: number): number => new Set(spans.filter((x) => x.start <= t && t < x.finish).map((x) => x.host)).size;
    expect(Math.max(...spans.map((x) => inFlightAt(x.start)))).toBe(2);
  });

  it('serves the per-host record over HTTP', async () => {
    const res = await fetch(`${flow.url}/hosts`, { headers: { authorization: `Bearer ${TOKEN}` } });
    expect(res.status).toBe(200);
    const hosts = (await res.json()) as Record<string, { taskId: string; submittedAt: string }[]>;
    expect(hosts[s.hosts.c!.host]!.map((c) => c.taskId).sort()).toEqual(
      [byUrl(report, s.url('c', '/')).taskId, byUrl(report, s.url('c', '/c2')).taskId].sort(),
    );
  });
});

describe('pacing rules beyond one delay', () => {
  it('a longer robots.txt Crawl-delay wins over perHostDelayMs', async () => {
    const s = await site({
      slow: { robots: 'User-agent: *\nCrawl-delay: 0.7\n', pages: { '/1': '<title>1</title>', '/2': '<title>2</title>', '/3': '<title>3</title>' } },
    });
    const body = dispatchBody({ perHostDelayMs: 100, pages: ['/1', '/2', '/3'].map((p) => ({ url: s.url('slow', p), follow: false })) });
    const { report } = await runLevel(body);
    expect(report.pages.map((p) => p.status)).toEqual(['captured', 'captured', 'captured']);
    const gaps = s.gaps('slow');
    expect(gaps).toHaveLength(2);
    for (const g of gaps) expect(g.gapMs).toBeGreaterThanOrEqual(700);
  });

  it('a shorter Crawl-delay does not shorten perHostDelayMs', async () => {
    const s = await site({ h: { robots: 'User-agent: *\nCrawl-delay: 0.05\n', pages: { '/1': 'x', '/2': 'y' } } });
    await runLevel(dispatchBody({ perHostDelayMs: 400, pages: ['/1', '/2'].map((p) => ({ url: s.url('h', p), follow: false })) }));
    expect(s.gaps('h')[0]!.gapMs).toBeGreaterThanOrEqual(400);
  });

  it('submits nothing on a host before its notBefore', async () => {
    const s = await site({ h: { pages: { '/1': 'x' } }, k: { pages: { '/1': 'y' } } });
    // far enough ahead that the other host's browser capture starts well before it
    const notBefore = Date.now() + 3000;
    const { report } = await runLevel(
      dispatchBody({
        notBefore: { [s.hosts.h!.host]: new Date(notBefore).toISOString() },
        pages: [
          { url: s.url('h', '/1'), follow: false },
          { url: s.url('k', '/1'), follow: false },
        ],
      }),
    );
    const first = s.pageRequests('h')[0]!;
    expect(first.startedAt).toBeGreaterThanOrEqual(notBefore);
    expect(Date.parse(report.pages[0]!.submittedAt!)).toBeGreaterThanOrEqual(notBefore);
    // the other host did not wait for it
    expect(s.pageRequests('k')[0]!.startedAt).toBeLessThan(notBefore);
  });

  it('keeps the spacing across levels through the report: its hosts say the last finish and delay, the next dispatch’s notBefore holds them', async () => {
    // levels are workflows of their own (on any worker): what carries the spacing from one to the
    // next is the ledger's record of each report's hosts, sent back as notBefore
    const s = await site({ h: { pages: { '/1': 'x', '/2': 'y' } } });
    const crawlId = randomUUID();
    const { report } = await runLevel(dispatchBody({ crawlId, depth: 0, perHostDelayMs: 600, pages: [{ url: s.url('h', '/1'), follow: true }] }));
    const [host] = report.hosts!;
    expect(host).toMatchObject({ host: new URL(s.url('h', '/')).host, delayMs: 600 });
    const notBefore = { [host!.host]: new Date(Date.parse(host!.lastFinishedAt!) + host!.delayMs).toISOString() };
    await runLevel(dispatchBody({ crawlId, depth: 1, perHostDelayMs: 600, notBefore, pages: [{ url: s.url('h', '/2'), follow: true }] }));
    expect(s.gaps('h')[0]!.gapMs).toBeGreaterThanOrEqual(600);
  });

  it('with hostParallelism 1, captures one host at a time and uses a host’s delay for another', async () => {
    const s = await site({ p: { pages: { '/1': 'a', '/2': 'b' } }, q: { pages: { '/1': 'c', '/2': 'd' } } });
    const { report } = await runLevel(
      dispatchBody({
        perHostDelayMs: 300,
        hostParallelism: 1,
        pages: [...['/1', '/2'].map((x) => ({ url: s.url('p', x), follow: false })), ...['/1', '/2'].map((x) => ({ url: s.url('q', x), follow: false }))],
      }),
    );
    expect(s.maxConcurrentHosts()).toBe(1);
    const captures = report.pages.map((p) => ({ host: new URL(p.url).host, start: Date.parse(p.submittedAt!), finish: Date.parse(p.finishedAt!) }));
    expect(pacingViolations(captures, { perHostDelayMs: 300, hostParallelism: 1 })).toEqual([]);
    // q's first capture went in p's delay, not after both of p's
    const qFirst = s.pageRequests('q')[0]!.startedAt;
    expect(qFirst).toBeLessThan(s.pageRequests('p')[1]!.startedAt);
  });

  it('treats a robots.txt that answers 5xx as disallowing everything, and a 404 as allowing everything', async () => {
    const s = await site({ down: { robotsStatus: 503, pages: { '/': 'x' } }, none: { pages: { '/': 'y' } } });
    const { report } = await runLevel(
      dispatchBody({
        pages: [
          { url: s.url('down', '/'), follow: true },
          { url: s.url('none', '/'), follow: true },
        ],
      }),
    );
    expect(report.pages.map((p) => [p.status, p.skipReason])).toEqual([
      ['skipped', 'robots'],
      ['captured', undefined],
    ]);
    expect(s.pageRequests('down')).toEqual([]);
  });
});

describe('test knobs', () => {
  it('capture duration, failed, cancelled (deadline), succeeded-but-reported-failed and manifestError, from the query string', async () => {
    const s = await site({
      k: {
        pages: {
          '/ok': '<title>ok</title>',
          '/broken': '<title>b</title>',
          '/lying': '<title>lying</title><p>fine really</p>',
          '/lost': '<title>lost</title>',
        },
      },
      m: { pages: { '/slow': '<title>slow</title>', '/ok': '<title>ok m</title>' } },
    });
    const body = dispatchBody({
      perHostDelayMs: 50,
      pages: [
        ...['/ok', '/broken', '/lying', '/lost'].map((p) => ({ url: s.url('k', p), follow: true })),
        ...['/slow', '/ok'].map((p) => ({ url: s.url('m', p), follow: true })),
      ],
    });
    const q = `?captureDelayMs=400&fail=/broken&deadlineMs=5000&slow=/slow:9000&reportFailed=/lying&manifestError=/lost`;
    const { report } = await runLevel(body, q);
    const page = (host: string, path: string): PageReport => byUrl(report, s.url(host, path));

    // capture duration: every capture took at least the extra 400 ms, the one failed on purpose too
    // (a page here loads in far less, so a failure that skipped the extra time would show)
    for (const p of report.pages) expect(Date.parse(p.finishedAt!) - Date.parse(p.submittedAt!)).toBeGreaterThanOrEqual(400);

    // failed
    const broken = page('k', '/broken');
    expect(broken.status).toBe('failed');
    expect(await manifestOf(broken)).toMatchObject({ status: 'failed', artifacts: [], error: { type: 'ERROR_TYPE_INJECTED' } });

    // cancelled: torn down at the deadline, manifest failed with ERROR_TYPE_CANCELLED and no artifacts
    const slow = page('m', '/slow');
    expect(slow.status).toBe('failed');
    const ms = await manifestOf(slow);
    expect(ms).toMatchObject({ status: 'failed', artifacts: [], error: { type: ERROR_TYPE_CANCELLED } });
    const took = Date.parse(slow.finishedAt!) - Date.parse(slow.submittedAt!);
    expect(took).toBeGreaterThanOrEqual(5000);
    expect(took).toBeLessThan(9000);
    expect(await exists(`captures/${body.crawlId}/0/${slow.taskId}.wacz`)).toBe(false);

    // the manifest says succeeded, the report says failed
    const lying = page('k', '/lying');
    expect(lying.status).toBe('failed');
    const ml = await manifestOf(lying);
    expect(ml.status).toBe('succeeded');
    expect(ml.artifacts.map((a) => a.format)).toEqual(['wacz', 'links']);
    expect(await exists(ml.artifacts[0]!.key)).toBe(true);

    // manifestError instead of manifestKey, and nothing at the key it would have had
    const lost = page('k', '/lost');
    expect(lost.status).toBe('failed');
    expect(lost.manifestKey).toBeUndefined();
    expect(lost.manifestError).toMatch(/manifest/);
    expect(lost.taskId).toBeDefined();
    expect(await exists(`captures/${body.crawlId}/0/${lost.taskId}.result.json`)).toBe(false);

    // untouched pages are unaffected
    expect(page('k', '/ok').status).toBe('captured');
    expect(page('m', '/ok').status).toBe('captured');
  });

  it('a report that never arrives (dropReportDepth), and the next level reported as usual', async () => {
    const s = await site({ h: { pages: { '/': '<title>h</title>' } } });
    const crawlId = randomUUID();
    const body = dispatchBody({ crawlId, depth: 1, pages: [{ url: s.url('h', '/'), follow: true }] });
    expect((await dispatch(body, { query: '?dropReportDepth=1' })).status).toBe(202);
    const run = await flow.waitForLevel(crawlId, 1, 30_000);
    expect(run.state).toBe('dropped');
    expect(run.report?.pages.map((p) => p.status)).toEqual(['captured']);
    await new Promise((r) => setTimeout(r, 300));
    expect(receiver.received.filter((r) => r.path.includes(crawlId))).toEqual([]);
    // the page was still captured and its manifest written, only the report is lost
    expect(await exists(run.report!.pages[0]!.manifestKey!)).toBe(true);
    const { report } = await runLevel(dispatchBody({ crawlId, depth: 2, pages: [{ url: s.url('h', '/'), follow: true }] }));
    expect(report.depth).toBe(2);
  });

  it('process knobs set with PUT /knobs apply until changed; bad ones are 400', async () => {
    const auth = { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' };
    const bad = await fetch(`${flow.url}/knobs`, { method: 'PUT', headers: auth, body: JSON.stringify({ fail: 3 }) });
    expect(bad.status).toBe(400);
    const put = await fetch(`${flow.url}/knobs`, { method: 'PUT', headers: auth, body: JSON.stringify({ fail: ['/always-fails'] }) });
    expect(put.status).toBe(200);
    expect(await put.json()).toEqual({ fail: ['/always-fails'] });
    try {
      const s = await site({ h: { pages: { '/always-fails': 'x', '/fine': 'y' } } });
      const { report } = await runLevel(
        dispatchBody({
          pages: [
            { url: s.url('h', '/always-fails'), follow: false },
            { url: s.url('h', '/fine'), follow: false },
          ],
        }),
      );
      expect(report.pages.map((p) => p.status)).toEqual(['failed', 'captured']);
    } finally {
      await fetch(`${flow.url}/knobs`, { method: 'PUT', headers: auth, body: '{}' });
    }
    expect(flow.knobs).toEqual({});
  });
});

describe('reporting', () => {
  it('retries a report on 5xx with backoff until it is accepted', async () => {
    const s = await site({ h: { pages: { '/': 'x' } } });
    const body = dispatchBody({ pages: [{ url: s.url('h', '/'), follow: false }] });
    receiver.answers.push(503, 502);
    expect((await dispatch(body)).status).toBe(202);
    const run = await flow.waitForLevel(body.crawlId, 0, 30_000);
    expect(run.state).toBe('reported');
    expect(run.outcome!.attempts.map((a) => a.status)).toEqual([503, 502, 202]);
    const got = receiver.received.filter((r) => r.path.includes(body.crawlId));
    expect(got).toHaveLength(3);
    // backoff: baseDelayMs (50) before the second attempt, twice that before the third
    expect(got[1]!.at - got[0]!.at).toBeGreaterThanOrEqual(50);
    expect(got[2]!.at - got[1]!.at).toBeGreaterThanOrEqual(100);
    expect(got[2]!.body).toEqual(got[0]!.body);
  });

  it('does not retry a 4xx answer', async () => {
    const s = await site({ h: { pages: { '/': 'x' } } });
    const body = dispatchBody({ pages: [{ url: s.url('h', '/'), follow: false }] });
    receiver.answers.push(409);
    expect((await dispatch(body)).status).toBe(202);
    const run = await flow.waitForLevel(body.crawlId, 0, 30_000);
    expect(run.state).toBe('report-failed');
    expect(run.outcome!.attempts.map((a) => a.status)).toEqual([409]);
  });

  it('retries when the ledger cannot be reached at all, then gives up', async () => {
    const s = await site({ h: { pages: { '/': 'x' } } });
    const body = dispatchBody({ reportUrl: 'http://127.0.0.1:1/api/crawls/x/levels/0', pages: [{ url: s.url('h', '/'), follow: false }] });
    expect((await dispatch(body)).status).toBe(202);
    const run = await flow.waitForLevel(body.crawlId, 0, 30_000);
    expect(run.state).toBe('report-failed');
    expect(run.outcome!.attempts).toHaveLength(4);
    expect(run.outcome!.attempts.every((a) => a.error !== undefined)).toBe(true);
  });
});

describe('signing and formats', () => {
  it('signs the WACZ when the dispatch asks for signing, and writes the rendered DOM when html is a format', async () => {
    const s = await site({ h: { pages: { '/': '<title>signed</title><p>s</p><script>document.body.append("by script")</script>' } } });
    const body = dispatchBody({ signing: true, formats: ['wacz', 'html'], pages: [{ url: s.url('h', '/'), follow: false }] });
    const { report } = await runLevel(body);
    const m = await manifestOf(report.pages[0]!);
    expect(m.artifacts.map((a) => a.format)).toEqual(['wacz', 'html']);
    const w = await readWacz(await getObject(m.artifacts[0]!.key));
    expect(w.digest?.signedData?.publicKey).toBeDefined();
    expect(waczProblems(w)).toEqual([]);
    expect((await getObject(m.artifacts[1]!.key)).toString('utf8')).toBe(
      '<html><head><title>signed</title></head><body><p>s</p><script>document.body.append("by script")</script>by script</body></html>',
    );
  });

  it('produces a format on its own: png alone is a png artifact and nothing else', async () => {
    const s = await site({ h: { pages: { '/': '<title>t</title>' } } });
    const { report } = await runLevel(dispatchBody({ formats: ['png'], pages: [{ url: s.url('h', '/'), follow: false }] }));
    expect(report.pages[0]!.status).toBe('captured');
    const m = await manifestOf(report.pages[0]!);
    expect(m.artifacts.map((a) => a.format)).toEqual(['png']);
    expect((await getObject(m.artifacts[0]!.key)).subarray(0, 8).toString('hex')).toBe('89504e470d0a1a0a');
  });

  it('answers a duplicate dispatch of a level in progress without capturing it twice', async () => {
    const s = await site({ h: { pages: { '/': 'x' }, delayMs: 300 } });
    const body = dispatchBody({ pages: [{ url: s.url('h', '/'), follow: false }] });
    expect((await dispatch(body)).status).toBe(202);
    const again = await dispatch(body);
    expect(again.status).toBe(202);
    expect((await again.json()).duplicate).toBe(true);
    await flow.waitForLevel(body.crawlId, 0, 30_000);
    expect(s.pageRequests('h')).toHaveLength(1);
  });

  it('a level dispatched again after it settled reports the pages whose manifests exist from them, capturing only the rest', async () => {
    const s = await site({ h: { pages: { '/1': '<title>1</title>', '/2': '<title>2</title>', '/3': '<title>3</title>' } } });
    const body = dispatchBody({ perHostDelayMs: 0, pages: ['/1', '/2'].map((p) => ({ url: s.url('h', p), follow: false })) });
    const first = await runLevel(body);
    expect(s.pageRequests('h')).toHaveLength(2);
    receiver.received.length = 0;
    // the same level again, now with a third page the first attempt never had
    const again = await runLevel({ ...body, pages: [...body.pages, { url: s.url('h', '/3'), follow: false }] });
    expect(s.pageRequests('h').map((r) => r.path)).toEqual(['/1', '/2', '/3']);
    // the earlier captures' manifests, at the versions they were written (the bucket keeps versions)
    for (const p of first.report.pages) expect(p.manifestVersionId).toMatch(/^\S+$/);
    expect(again.report.pages.slice(0, 2)).toEqual(
      first.report.pages.map((p) => ({
        url: p.url,
        status: p.status,
        taskId: p.taskId,
        manifestKey: p.manifestKey,
        manifestVersionId: p.manifestVersionId,
        finalUrl: p.finalUrl,
        submittedAt: p.submittedAt,
        finishedAt: p.finishedAt,
      })),
    );
    expect(again.report.pages[2]).toMatchObject({ status: 'captured', taskId: pageTaskId(body.crawlId, 0, s.url('h', '/3')) });
  });
});
