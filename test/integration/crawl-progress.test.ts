// GET /api/crawls/:id/progress read while a crawl runs (the real flow's heartbeats), and the
// pacing audit of GET /api/crawls/:id/pacing checked against the test site's own request log.
// The heartbeat route's gate (token and the level's capability) is attacked as well.
import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { crawlWorkflowId } from '../../temporal.config.ts';
import { levelHeartbeatSignal } from '../../src/workflows/messages.ts';
import { CAPABILITY_HEADER } from '../../src/domain/contract.ts';
import type { ProgressView } from '../../src/domain/progress.ts';
import { eventually, waitForCrawlEnd } from '../support/crawls.ts';
import { useLiveCrawlStack } from '../support/live-crawl.ts';

const ORG = 'acme';
const DELAY = 400;
const aPaths = ['/a1', '/a2', '/a3', '/a4', '/a5'];
const bPaths = ['/b1', '/b2'];

interface Pacing {
  crawlId: string;
  perHostDelayMs: number;
  violations: number;
  hosts: { host: string; pages: number; minGapMs: number | null; effectiveDelayMs: number; violations: number; overlaps: number; gapsMs: number[] }[];
}

const s = useLiveCrawlStack({
  org: ORG,
  hosts: {
    a: {
      pages: {
        '/': `<title>A</title>${aPaths.map((p) => `<a href="${p}">${p}</a>`).join(' ')} <a href="{{b}}/">b</a>`,
        ...Object.fromEntries(aPaths.map((p) => [p, `<title>${p}</title>`])),
      },
      delayMs: 150,
    },
    b: {
      robots: 'User-agent: *\nCrawl-delay: 1\n',
      pages: {
        '/': `<title>B</title>${bPaths.map((p) => `<a href="${p}">${p}</a>`).join(' ')}`,
        ...Object.fromEntries(bPaths.map((p) => [p, `<title>${p}</title>`])),
      },
    },
  },
  flow: { heartbeatIntervalMs: 200 },
});

async function get<T>(path: string, subject = 'alice', orgs = [ORG]): Promise<{ status: number; body: T }> {
  const res = await fetch(`${s.api.url}${path}`, { headers: await s.as(subject, orgs) });
  return { status: res.status, body: (await res.json()) as T };
}

async function startCrawl(): Promise<string> {
  const res = await fetch(`${s.api.url}/api/crawls`, {
    method: 'POST',
    headers: await s.as('alice', [ORG]),
    body: JSON.stringify({
      seeds: [s.site.url('a', '/'), s.site.url('b', '/')],
      maxDepth: 1,
      perHostDelayMs: DELAY,
      hostParallelism: 2,
      rules: [{ follow: 'same-origin' }],
    }),
  });
  expect(res.status).toBe(202);
  return ((await res.json()) as { crawlId: string }).crawlId;
}

describe('live progress and the pacing audit', () => {
  it('progress is read while the crawl runs: phase, depth, per-level counts and per-host state from the heartbeats; the ledger answers once it has finished', async () => {
    s.site.clearLog();
    const crawlId = await startCrawl();
    const a = s.site.hosts.a!.host;

    // while level 1 is being captured: the flow's heartbeat, as the API serves it
    const live = await eventually(
      async () => {
        const { status, body } = await get<ProgressView>(`/api/crawls/${crawlId}/progress`);
        expect(status).toBe(200);
        const l1 = body.levels.find((l) => l.depth === 1);
        return body.state === 'running' && body.depth === 1 && body.phase === 'waiting' && l1?.heartbeat && body.hosts.some((h) => h.host === a)
          ? body
          : undefined;
      },
      60_000,
      'progress of level 1 while it runs',
    );
    expect(live).toMatchObject({ crawlId, state: 'running', source: 'workflow', maxDepth: 1, stopReason: null });
    const l1 = live.levels.find((l) => l.depth === 1)!;
    expect(l1).toMatchObject({ dispatched: 7, pages: 7, redispatches: 0 });
    expect(l1.heartbeat!.pagesTotal).toBe(7);
    expect(l1.heartbeat!.pagesDone).toBeLessThan(7);
    expect(live.levels.find((l) => l.depth === 0)).toMatchObject({ captured: 2, pending: 0, dispatched: 2 });
    const ha = live.hosts.find((h) => h.host === a)!;
    expect(ha.queued + ha.inFlight).toBeGreaterThan(0);
    expect(ha.queued).toBeLessThanOrEqual(aPaths.length);
    expect(ha.nextAllowedAt === null || !Number.isNaN(Date.parse(ha.nextAllowedAt))).toBe(true);

    const row = await waitForCrawlEnd(s.tdb.db, crawlId, 90_000);
    expect(row.state).toBe('succeeded');
    const done = await get<ProgressView>(`/api/crawls/${crawlId}/progress`);
    expect(done.body).toMatchObject({ state: 'succeeded', stopReason: 'max_depth', source: 'ledger', phase: null, depth: 1, hosts: [] });
    expect(done.body.levels.map((l) => [l.depth, l.pages, l.captured, l.pending])).toEqual([
      [0, 2, 2, 0],
      [1, 7, 7, 0],
    ]);

    // the pacing audit: the spec's query over crawl_pages, against what the site itself logged
    const pacing = await get<Pacing>(`/api/crawls/${crawlId}/pacing`);
    expect(pacing.status).toBe(200);
    expect(pacing.body).toMatchObject({ crawlId, perHostDelayMs: DELAY, violations: 0 });
    const b = s.site.hosts.b!.host;
    expect(pacing.body.hosts.map((h) => h.host).sort()).toEqual([a, b].sort());
    for (const [name, paths] of [
      ['a', ['/', ...aPaths]],
      ['b', ['/', ...bPaths]],
    ] as const) {
      const audit = pacing.body.hosts.find((h) => h.host === s.site.hosts[name]!.host)!;
      const requests = s.site.pageRequests(name).filter((r) => (paths as readonly string[]).includes(r.path));
      const siteGaps = requests.slice(1).map((r, i) => r.startedAt - requests[i]!.finishedAt);
      expect(audit.pages, name).toBe(requests.length);
      expect(audit.violations, name).toBe(0);
      expect(audit.overlaps, name).toBe(0);
      expect(audit.minGapMs!, name).toBeGreaterThanOrEqual(audit.effectiveDelayMs);
      // the gaps themselves, for the picker's chart: one per page after the first, the smallest as above
      expect(audit.gapsMs, name).toHaveLength(audit.pages - 1);
      expect(Math.min(...audit.gapsMs), name).toBe(audit.minGapMs);
      // the ledger's gap runs from the flow's finish to its next submit, which enclose the
      // site's own response and request: the site never saw a shorter gap than the audit says
      expect(Math.min(...siteGaps), name).toBeGreaterThanOrEqual(audit.minGapMs!);
    }
    expect(pacing.body.hosts.find((h) => h.host === a)!.effectiveDelayMs).toBe(DELAY);
    // b's robots.txt says Crawl-delay: 1, which wins over 400 ms
    expect(pacing.body.hosts.find((h) => h.host === b)!.effectiveDelayMs).toBe(1000);

    // the audit can fail: move one of a's submits to 100 ms after the previous finish
    await sql`
      WITH w AS (SELECT id, lag(finished_at) OVER (ORDER BY submitted_at) AS prev FROM crawl_pages WHERE crawl_id = ${crawlId} AND host = ${a} AND submitted_at IS NOT NULL)
      UPDATE crawl_pages p SET submitted_at = w.prev + interval '100 milliseconds' FROM w
      WHERE p.id = w.id AND w.prev IS NOT NULL AND p.id = (SELECT max(id) FROM w WHERE prev IS NOT NULL)
    `.execute(s.tdb.db);
    const tampered = await get<Pacing>(`/api/crawls/${crawlId}/pacing`);
    expect(tampered.body.violations).toBe(1);
    expect(tampered.body.hosts.find((h) => h.host === a)).toMatchObject({ violations: 1, minGapMs: 100, overlaps: 0 });
  }, 150_000);

  it('progress and pacing are 404 for a caller who may not submit for the organization, 401 without a token, 400 for a bad id', async () => {
    // a crawl of its own, so this holds whichever test runs first or alone
    const crawlId = await startCrawl();
    for (const path of ['progress', 'pacing']) {
      expect((await get(`/api/crawls/${crawlId}/${path}`, 'mallory', ['other'])).status).toBe(404);
      expect((await get(`/api/crawls/${crawlId}/${path}`, 'bob', [ORG])).status).toBe(404); // a member is not a submitter
      expect((await fetch(`${s.api.url}/api/crawls/${crawlId}/${path}`)).status).toBe(401);
      const bad = await get<{ error: string }>(`/api/crawls/not-a-uuid/${path}`);
      expect(bad.status).toBe(400);
    }
  });

  it("a heartbeat needs the level's capability and a token; a forged one is refused and reaches no workflow", async () => {
    s.flow.setKnobs({ captureDelayMs: 4000 });
    const crawlId = await startCrawl();
    const level = await eventually(async () => s.flow.level(crawlId, 0), 30_000, 'level 0 dispatched');
    // the flow's own heartbeats would overwrite the one this test sends: it dies (its successor
    // hears nothing until a re-dispatch, 60 s away)
    await s.restartFlow();
    const url = `${s.api.url}/api/crawls/${crawlId}/levels/0/heartbeat`;
    const body = JSON.stringify({
      depth: 0,
      pagesTotal: 2,
      pagesDone: 2,
      pagesInFlight: 0,
      hosts: [{ host: 'refused.test:1', queued: 0, inFlight: 0, nextAllowedAt: null }],
    });
    const token = await s.as('capture-flow', ['other']);
    const post = (headers: Record<string, string>, b = body, to = url) =>
      fetch(to, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: b });

    expect((await post(token)).status).toBe(403);
    const wrong = await post({ ...token, [CAPABILITY_HEADER]: 'x'.repeat(43) });
    expect(wrong.status).toBe(403);
    expect(((await wrong.json()) as { detail: string }).detail).toContain('matches no dispatch');
    expect((await post({ [CAPABILITY_HEADER]: 'x'.repeat(43) })).status).toBe(401);
    // the capability of level 0 does not open level 1
    expect((await post({ ...token, [CAPABILITY_HEADER]: level.dispatch.capability! }, body, url.replace('/levels/0/', '/levels/1/'))).status).toBe(403);
    // a body that does not match the URL, or is not a heartbeat, is a 400 naming it
    const mismatch = await post(
      { ...token, [CAPABILITY_HEADER]: level.dispatch.capability! },
      JSON.stringify({ depth: 1, pagesTotal: 1, pagesDone: 0, pagesInFlight: 0, hosts: [] }),
    );
    expect(mismatch.status).toBe(400);
    expect(JSON.stringify(await mismatch.json())).toContain('body.depth');
    expect((await post({ ...token, [CAPABILITY_HEADER]: level.dispatch.capability! }, JSON.stringify({ depth: 0, pagesDone: -1 }))).status).toBe(400);

    // the killed flow's heartbeats took the level's turn to signal the workflow; free it, as the
    // quarter of the liveness window passing would
    await s.tdb.db.updateTable('crawl_level_dispatches').set({ heartbeat_signalled_at: null }).where('crawl_id', '=', crawlId).execute();
    // the flow's own capability and any valid token: accepted, passed on, and the workflow shows it
    const beat = (host: string) =>
      JSON.stringify({ depth: 0, pagesTotal: 2, pagesDone: 1, pagesInFlight: 1, hosts: [{ host, queued: 0, inFlight: 1, nextAllowedAt: null }] });
    const ok = await post({ ...token, [CAPABILITY_HEADER]: level.dispatch.capability! }, beat('forged.test:1'));
    expect(ok.status).toBe(202);
    expect(await ok.json()).toEqual({ accepted: true, passedOn: true });
    const seen = await eventually(
      async () => {
        const p = await get<ProgressView>(`/api/crawls/${crawlId}/progress`);
        return p.body.hosts.some((h) => h.host === 'forged.test:1') ? p.body : undefined;
      },
      10_000,
      'the accepted heartbeat in the progress',
    );
    expect(seen.hosts.some((h) => h.host === 'refused.test:1')).toBe(false);

    // within a quarter of the liveness window the next ones are accepted but not passed on: every
    // signal stays in the workflow's history, so a flow that floods heartbeats cannot grow it
    const flood = await Promise.all(
      Array.from({ length: 20 }, (_, i) => post({ ...token, [CAPABILITY_HEADER]: level.dispatch.capability! }, beat(`flood${i}.test:1`))),
    );
    expect(flood.map((r) => r.status)).toEqual(Array(20).fill(202));
    expect((await Promise.all(flood.map((r) => r.json()))).filter((b) => (b as { passedOn: boolean }).passedOn)).toEqual([]);
    const history = await s.temporal.workflow.getHandle(crawlWorkflowId(crawlId)).fetchHistory();
    const heartbeatSignals = (history.events ?? []).filter((e) => e.workflowExecutionSignaledEventAttributes?.signalName === levelHeartbeatSignal.name);
    const signalled = heartbeatSignals.map((e) => Buffer.from(e.workflowExecutionSignaledEventAttributes!.input!.payloads![0]!.data!).toString('utf8'));
    expect(signalled.filter((b) => b.includes('forged.test:1'))).toHaveLength(1);
    expect(signalled.filter((b) => b.includes('flood'))).toEqual([]);
    expect((await get<ProgressView>(`/api/crawls/${crawlId}/progress`)).body.hosts.map((h) => h.host)).toEqual(['forged.test:1']);

    await s.endRunning();
    s.flow.setKnobs({});
    // after the crawl: 409, nothing to tell
    expect((await post({ ...token, [CAPABILITY_HEADER]: level.dispatch.capability! })).status).toBe(409);
  }, 90_000);
});
