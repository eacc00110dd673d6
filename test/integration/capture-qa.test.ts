// harness: not used because it tests the capture flow's quality checks alone (the flow, a test site, S3), with no ledger.
// The capture's quality check (issue 31, item 2), in real Chromium through the real flow and
// capture worker: with the dispatch's qa on, each capture is replayed from its own records and
// scored against the live page. A page built like a real site scores good and is captured once. A
// page built to replay badly (its script asks for a URL named after Date.now(), so its replay asks
// for one that was never recorded) needs review and is captured once more, after the host's delay;
// both attempts are in the manifest. Without qa nothing is scored and nothing captured twice.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DispatchBody, LevelReportBody, Manifest } from '../../src/domain/contract.ts';
import { QA_MIN_PIXELS, QA_MIN_TEXT } from '../../src/domain/qa.ts';
import { readWacz } from '../../src/domain/wacz/read.ts';
import { startFlowAlone, type FlowAlone } from '../support/flow-alone.ts';
import { dispatchTo } from '../support/report-receiver.ts';
import { realisticAssets, realisticPage, startSite, type Site } from '../support/site.ts';

const TOKEN = 'capture-qa-test-token';
const DELAY_MS = 400;
let alone: FlowAlone;
let site: Site;

/** A page whose script fetches a URL named after the clock and shows what it got. */
const CLOCK_PAGE = `<!doctype html><html><head><title>Clock page</title></head><body><h1>Clock page</h1><p id="stamp">waiting</p>
<script>fetch('/stamp?t=' + Date.now()).then((r) => r.text()).then((t) => { document.getElementById('stamp').textContent = t; });</script></body></html>`;

async function captureOne(url: string, over: Partial<DispatchBody>): Promise<Manifest> {
  const body = dispatchTo(alone.receiver.url, { perHostDelayMs: DELAY_MS, formats: ['wacz'], pages: [{ url, follow: false }], ...over });
  const level = await alone.dispatch(body, 120_000);
  const report = level.report as LevelReportBody;
  expect(report.pages[0]!.status).toBe('captured');
  return JSON.parse((await alone.getObject(report.pages[0]!.manifestKey!)).toString('utf8')) as Manifest;
}

beforeAll(async () => {
  alone = await startFlowAlone(TOKEN);
  site = await startSite({
    hosts: {
      a: {
        pages: { ...realisticAssets(), '/doc': realisticPage({ title: 'A faithful page', scriptLinks: ['/'], scriptText: 'Written by the page script.' }) },
      },
      // whatever /stamp?t=<n> is asked, the same answer
      b: { pages: { '/clock': CLOCK_PAGE, '/stamp': { contentType: 'text/plain', body: 'stamped' } } },
    },
  });
}, 120_000);

afterAll(async () => {
  await alone?.close();
  await site?.close();
});

describe('the quality check of each capture', { timeout: 240_000 }, () => {
  it('a page built like a real site replays as it looked: good, captured once', async () => {
    site.clearLog();
    const manifest = await captureOne(site.url('a', '/doc'), { qa: true });
    expect(manifest.qa).toHaveLength(1);
    const [only] = manifest.qa!;
    expect(only).toMatchObject({ attempt: 1, verdict: 'good', misses: 0, missed: [] });
    expect(only!.pixels).toBeGreaterThanOrEqual(QA_MIN_PIXELS);
    expect(only!.text).toBeGreaterThanOrEqual(QA_MIN_TEXT);
    expect(site.pageRequests('a').filter((r) => r.path === '/doc')).toHaveLength(1);
  });

  it('a page that asks at replay for what it never asked live needs review, and is captured once more after the host delay', async () => {
    site.clearLog();
    const manifest = await captureOne(site.url('b', '/clock'), { qa: true });
    expect(manifest.qa!.map((a) => [a.attempt, a.verdict])).toEqual([
      [1, 'review'],
      [2, 'review'],
    ]);
    for (const a of manifest.qa!) {
      expect(a.misses).toBeGreaterThanOrEqual(1);
      expect(a.missed.some((u) => u.startsWith(site.url('b', '/stamp?t=')))).toBe(true);
    }
    // the document was fetched twice, the second time no sooner than the delay after the first ended
    const docs = site.pageRequests('b').filter((r) => r.path === '/clock');
    expect(docs).toHaveLength(2);
    const firstEnd = Math.max(
      ...site
        .pageRequests('b')
        .filter((r) => r.startedAt < docs[1]!.startedAt)
        .map((r) => r.finishedAt),
    );
    expect(docs[1]!.startedAt - firstEnd).toBeGreaterThanOrEqual(DELAY_MS);
    // the WACZ kept is the second attempt's: its stamp request is the later one
    const wacz = await readWacz(await alone.getObject(manifest.artifacts.find((x) => x.format === 'wacz')!.key));
    const stamps = wacz.cdx.filter((e) => e.url.includes('/stamp?t=')).map((e) => e.url);
    const asked = site
      .pageRequests('b')
      .filter((r) => r.path.startsWith('/stamp?t='))
      .map((r) => r.url);
    expect(asked).toHaveLength(2);
    expect(stamps).toEqual([asked[1]]);
  });

  it('without qa nothing is scored and nothing captured twice (the control)', async () => {
    site.clearLog();
    const manifest = await captureOne(site.url('b', '/clock'), {});
    expect(manifest.qa).toBeUndefined();
    expect(site.pageRequests('b').filter((r) => r.path === '/clock')).toHaveLength(1);
  });
});
