// Issues 13 and 25: a capture flow that dies in the middle of a level costs nothing but the pages
// it had in hand. The real flow (Chromium) captures a level of 14 pages on the test site; after a
// few of them it is killed (receiver, flow worker and capture worker: no heartbeat, no further
// page, nothing written or reported) and a new flow starts on the same port. The level lives on
// in Temporal: the new flow's workers take it up where it was, with no re-dispatch, report what
// the first one had finished from its slices and capture only the rest. The level timeout
// (10 minutes) is never what ends it.
import { describe, expect, it } from 'vitest';
import { crawlWorkflowId } from '../../temporal.config.ts';
import type { CrawlWorkflowResult } from '../../src/workflows/crawl.ts';
import { waitForCrawlEnd, eventually } from '../support/crawls.ts';
import { useLiveCrawlStack } from '../support/live-crawl.ts';

const ORG = 'acme';
const PAGES = 14;
const paths = Array.from({ length: PAGES }, (_, i) => `/p${i + 1}`);

const s = useLiveCrawlStack({
  org: ORG,
  hosts: {
    r: {
      pages: {
        '/': `<title>R</title>${paths.map((p) => `<a href="${p}">${p}</a>`).join(' ')}`,
        ...Object.fromEntries(paths.map((p) => [p, `<title>${p}</title><p>page ${p}</p>`])),
      },
    },
  },
  env: { CAPTURE_LEDGER_LEVEL_TIMEOUT_SECONDS: '600', CAPTURE_LEDGER_LEVEL_LIVENESS_SECONDS: '30' },
  flow: { heartbeatIntervalMs: 250 },
});

describe('a capture flow killed and restarted in the middle of a level', () => {
  it('the level goes on under the new flow without a re-dispatch; the crawl succeeds with every page captured once', async () => {
    const first = s.flow;
    const res = await fetch(`${s.api.url}/api/crawls`, {
      method: 'POST',
      headers: await s.as('alice', [ORG]),
      body: JSON.stringify({ seeds: [s.site.url('r', '/')], maxDepth: 1, maxPages: 30, perHostDelayMs: 300 }),
    });
    expect(res.status).toBe(202);
    const { crawlId } = (await res.json()) as { crawlId: string };
    const host = s.site.hosts.r!.host;

    // kill the flow once four pages of level 1 are done (captured and their manifests written)
    const level1 = await eventually(async () => first.level(crawlId, 1), 60_000, 'level 1 dispatched');
    expect(level1.dispatch.heartbeatUrl).toBe(`${s.api.url}/api/crawls/${crawlId}/levels/1/heartbeat`);
    await eventually(
      async () => (first.hostLog.get(host).filter((c) => c.depth === 1).length >= 4 ? true : undefined),
      60_000,
      'four pages of level 1 captured',
    );
    const progressBefore = (await (await fetch(`${s.api.url}/api/crawls/${crawlId}/progress`, { headers: await s.as('alice', [ORG]) })).json()) as {
      levels: { depth: number; heartbeat: { pagesTotal: number } | null }[];
    };
    expect(progressBefore.levels.find((l) => l.depth === 1)?.heartbeat?.pagesTotal).toBe(PAGES);
    const second = await s.restartFlow();
    expect(second.port).toBe(first.port);
    expect(first.level(crawlId, 1)?.state).toBe('dropped');

    const row = await waitForCrawlEnd(s.tdb.db, crawlId, 120_000);
    expect(row).toMatchObject({ state: 'succeeded', stop_reason: 'max_depth', failure: null });

    // the workflow dispatched level 1 once: the new flow took the running level up
    const result = (await s.tw.client.workflow.getHandle(crawlWorkflowId(crawlId)).result()) as CrawlWorkflowResult;
    const level1Summary = result.levels.find((l) => l.depth === 1);
    expect(level1Summary).toMatchObject({ dispatched: PAGES });
    expect(level1Summary?.redispatches ?? 0).toBe(0);

    // every page of the level captured and archived exactly once
    const pages = await s.tdb.db.selectFrom('crawl_pages').select(['url', 'state', 'task_id']).where('crawl_id', '=', crawlId).where('depth', '=', 1).execute();
    expect(pages.map((p) => p.url).sort()).toEqual(paths.map((p) => s.site.url('r', p)).sort());
    expect(pages.every((p) => p.state === 'captured')).toBe(true);
    const archives = await s.tdb.db
      .selectFrom('archives')
      .innerJoin('crawl_pages', 'crawl_pages.task_id', 'archives.task_id')
      .select(['crawl_pages.url'])
      .where('crawl_pages.crawl_id', '=', crawlId)
      .where('crawl_pages.depth', '=', 1)
      .execute();
    expect(archives.map((a) => a.url).sort()).toEqual(pages.map((p) => p.url).sort());

    // the new flow reported the first one's finished pages from their slices (same taskIds)
    // and captured only the rest; at most the page being uploaded when the first died is captured
    // by both (its manifest was never written)
    const capturedBySecond = new Set(
      second.hostLog
        .get(host)
        .filter((c) => c.depth === 1)
        .map((c) => c.url),
    );
    const firstTasks = new Map(
      first.hostLog
        .get(host)
        .filter((c) => c.depth === 1)
        .map((c) => [c.url, c.taskId]),
    );
    const report = (await second.waitForLevel(crawlId, 1, 30_000)).report!;
    expect(report.pages.filter((p) => p.status === 'captured')).toHaveLength(PAGES);
    const reused = report.pages.filter((p) => !capturedBySecond.has(p.url)).map((p) => p.url);
    expect(reused.length).toBeGreaterThanOrEqual(3);
    for (const url of reused) {
      expect(firstTasks.has(url), `${url} reported without being captured`).toBe(true);
      expect(pages.find((p) => p.url === url)?.task_id).toBe(firstTasks.get(url));
    }
    expect([...capturedBySecond].filter((url) => firstTasks.has(url)).length).toBeLessThanOrEqual(1);

    // what the site saw: each page of the level fetched once, except at most the one the first
    // flow had in flight when it died (a dying process's last request reaches the host)
    const fetched = s.site.pageRequests('r').filter((r) => paths.includes(r.path));
    const perPath = new Map<string, number>();
    for (const r of fetched) perPath.set(r.path, (perPath.get(r.path) ?? 0) + 1);
    expect([...perPath.keys()].sort()).toEqual([...paths].sort());
    expect([...perPath.values()].filter((n) => n > 1).length).toBeLessThanOrEqual(1);
    expect(Math.max(...perPath.values())).toBeLessThanOrEqual(2);
  }, 180_000);
});
