// The site and crawl of the slot-lead tests (capture-slot-lead*.test.ts): three hosts of a front
// page linking three pages each, so one or two slots are fewer than the hosts and captures are
// handed over behind others.
import { pacingFaults, postCrawl } from './crawl-rows.ts';
import type { LiveCrawlOptions, LiveCrawlStack } from './live-crawl.ts';
import { linkedPagesSite } from './site.ts';

export const SLOT_LEAD_ORG = 'acme';
const HOSTS = ['a', 'b', 'c'];
const paths = ['/p1', '/p2', '/p3'];

export function slotLeadStack(flow?: LiveCrawlOptions['flow']): LiveCrawlOptions {
  return {
    org: SLOT_LEAD_ORG,
    hosts: linkedPagesSite(HOSTS, paths),
    env: { CAPTURE_LEDGER_LEVEL_LIVENESS_SECONDS: '600' },
    ...(flow !== undefined ? { flow } : {}),
  };
}

/** the three front pages as seeds, the level after them, 300 ms per host */
export const startSlotLeadCrawl = async (s: LiveCrawlStack, hostParallelism: number): Promise<string> =>
  postCrawl(s.api.url, await s.as('alice', [SLOT_LEAD_ORG]), {
    seeds: HOSTS.map((h) => s.site.url(h, '/')),
    maxDepth: 1,
    maxPages: 100,
    perHostDelayMs: 300,
    hostParallelism,
  });

/** the pacing audit's violations and overlaps together */
export const auditViolations = async (s: LiveCrawlStack, crawlId: string): Promise<number> =>
  pacingFaults(s.api.url, await s.as('alice', [SLOT_LEAD_ORG]), crawlId);

export const slotLeadPages = (s: LiveCrawlStack): string[] => HOSTS.flatMap((h) => ['/', ...paths].map((p) => s.site.url(h, p))).sort();
