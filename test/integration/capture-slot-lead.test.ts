// Issue 25, pacing with fewer slots than hosts: the slice hands a capture over behind one in
// flight, to the queue of the worker that runs it, and that worker starts it the moment the one
// ahead ends its host's part (src/flow/capture-worker/lanes.ts), so a slot is not idle for a round
// trip through Temporal after every page. Shown on a real crawl: captures are handed over behind
// others, one slot still means one host at a time as the site saw it, and the pacing audit finds
// nothing.
// A worker that dies with captures handed over behind its own: capture-slot-lead-kill.test.ts.
import { describe, expect, it } from 'vitest';
import { archivedUrls, capturesOf } from '../support/crawl-rows.ts';
import { waitForCrawlEnd } from '../support/crawls.ts';
import { useLiveCrawlStack } from '../support/live-crawl.ts';
import { auditViolations, slotLeadPages, slotLeadStack, startSlotLeadCrawl } from '../support/slot-lead-site.ts';

const s = useLiveCrawlStack(slotLeadStack());
const allPages = (): string[] => slotLeadPages(s);

describe('slot lead: captures handed over behind others on their worker', () => {
  it('one slot, three hosts: later captures go behind earlier ones, and the site still sees one host at a time', async () => {
    // captures long enough that the slice hears one started well before it ends
    s.flow.setKnobs({ captureDelayMs: 500 });
    const crawlId = await startSlotLeadCrawl(s, 1);
    const row = await waitForCrawlEnd(s.tdb.db, crawlId, 150_000);
    expect(row).toMatchObject({ state: 'succeeded', stop_reason: 'max_depth', failure: null });
    expect(await archivedUrls(s.tdb.db, crawlId)).toEqual(allPages());
    const captures = capturesOf(crawlId, s.flow).sort((x, y) => x.submittedAt - y.submittedAt);
    expect(captures.map((c) => c.url).sort()).toEqual(allPages());
    // the level of 9 pages after the seeds: most are handed over behind the capture before them
    expect(captures.filter((c) => c.behind === true).length).toBeGreaterThanOrEqual(3);
    // one slot: as the hosts felt it, no capture began before the one before it had ended
    for (let i = 1; i < captures.length; i++) expect(captures[i]!.submittedAt).toBeGreaterThanOrEqual(captures[i - 1]!.finishedAt);
    expect(await auditViolations(s, crawlId)).toBe(0);
  }, 200_000);
});
