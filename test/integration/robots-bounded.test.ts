// A robots.txt built to freeze the matcher (issue 29, Deliver 3), over the real stack and the real
// capture flow: one host of a two-host crawl serves 1,239 rules such as `Disallow: /*a*a…*b` (half
// of them made to scan the whole path) and pages with 8,000-character paths. Before, one decision
// on such a page held the event loop for seconds, and every other host's captures with it. Now
// the other host keeps its pacing, the crawl succeeds, and each hostile page gets the decision
// robots-match.ts documents: the one no rule can match is captured, the one whose decision runs
// past MATCH_STEP_BUDGET is skipped as disallowed.
import { describe, expect, it } from 'vitest';
import { waitForCrawlEnd } from '../support/crawls.ts';
import { useLiveCrawlStack } from '../support/live-crawl.ts';

const ORG = 'robots';
const DELAY_MS = 200;
/** what a capture's gap may exceed its pacing by on this loaded machine; one frozen decision took 14 s */
const SLACK_MS = 3000;
const fastPaths = ['/f1', '/f2', '/f3', '/f4', '/f5'];
/** no rule can match it (every rule needs a "b"): allowed after a glance at each rule */
const unmatchable = `/${'a'.repeat(7999)}`;
/** has every character the scanning rules need but never "ab": each of them scans it all */
const scanned = `/${'b'.repeat(4000)}${'a'.repeat(3999)}`;

/** Just under the 500 KiB the flow reads (a cut rule could match anything: `/*a*a`). */
function hostileRobots(): string {
  const rules = Array.from({ length: 1239 }, (_, i) =>
    i % 2 === 0 ? `Disallow: /${'*a'.repeat(190)}*b${i}` : `Disallow: /${'*a'.repeat(190)}*${'a'.repeat(1 + (i % 5))}b`,
  );
  const body = `User-agent: *\n${rules.join('\n')}\n`;
  if (body.length > 500 * 1024) throw new Error(`robots.txt of ${body.length} bytes would be cut`);
  return body;
}

const s = useLiveCrawlStack({
  org: ORG,
  hosts: {
    // seeds are at most 2,048 characters: the long paths are links of the first level
    hostile: {
      robots: hostileRobots(),
      pages: {
        '/': `<title>Hostile</title><a href="${unmatchable}">one</a><a href="${scanned}">two</a>`,
        [unmatchable]: '<title>Long one</title>',
        [scanned]: '<title>Long two</title>',
      },
    },
    fast: {
      pages: {
        '/': `<title>Fast</title>${fastPaths.map((p) => `<a href="${p}">${p}</a>`).join('')}`,
        ...Object.fromEntries(fastPaths.map((p) => [p, `<title>${p}</title>`])),
      },
    },
  },
});

describe('a pathological robots.txt on one host', () => {
  it('does not hold the other host past its pacing; the crawl succeeds and each page has its decision', async () => {
    const seeds = [s.site.url('hostile', '/'), s.site.url('fast', '/')];
    const res = await fetch(`${s.api.url}/api/crawls`, {
      method: 'POST',
      headers: await s.as('alice', [ORG]),
      body: JSON.stringify({ seeds, maxDepth: 1, perHostDelayMs: DELAY_MS, hostParallelism: 1, rules: [{ follow: 'same-origin' }] }),
    });
    expect(res.status, await res.clone().text()).toBe(202);
    const { crawlId } = (await res.json()) as { crawlId: string };
    expect(await waitForCrawlEnd(s.tdb.db, crawlId, 120_000)).toMatchObject({ state: 'succeeded', stop_reason: 'max_depth' });

    const pages = await s.tdb.db.selectFrom('crawl_pages').select(['url', 'state', 'skip_reason']).where('crawl_id', '=', crawlId).execute();
    const stateOf = new Map(
      pages.map((p) => [
        new URL(p.url).host === s.site.hosts.fast!.host ? `fast${new URL(p.url).pathname}` : new URL(p.url).pathname.slice(0, 2),
        [p.state, p.skip_reason],
      ]),
    );
    expect(Object.fromEntries(stateOf)).toEqual({
      '/': ['captured', null],
      '/a': ['captured', null],
      '/b': ['skipped', 'robots'],
      'fast/': ['captured', null],
      ...Object.fromEntries(fastPaths.map((p) => [`fast${p}`, ['captured', null]])),
    });

    // the fast host's level-1 captures, while the hostile host's long pages were being decided:
    // each began within its pacing of the last one's finish
    const fast = s.flow.hostLog
      .get(s.site.hosts.fast!.host)
      .filter((c) => c.crawlId === crawlId && c.depth === 1)
      .sort((a, b) => a.submittedAt - b.submittedAt);
    expect(fast).toHaveLength(fastPaths.length);
    const gaps = fast.slice(1).map((c, i) => c.submittedAt - fast[i]!.finishedAt);
    for (const gap of gaps) {
      expect(gap).toBeGreaterThanOrEqual(DELAY_MS);
      expect(gap).toBeLessThan(DELAY_MS + SLACK_MS);
    }
  }, 180_000);
});
