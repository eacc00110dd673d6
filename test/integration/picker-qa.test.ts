// A crawl with qa, end to end (issue 31, item 2): the API takes the setting and says it, the
// flow scores every capture against its own replay, the ledger keeps the verdict, and the picker
// shows it in real Chromium: a page built like a real site as good, a page built to replay badly
// (it asks for a Date.now()-named URL) as needing review after being captured twice.
import { mkdirSync } from 'node:fs';
import { chromium, type Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitForCrawlEnd } from '../support/crawls.ts';
import { ROOT } from '../support/env.ts';
import { drain } from '../support/ledger.ts';
import { useLiveCrawlStack } from '../support/live-crawl.ts';
import { realisticAssets, realisticPage } from '../support/site.ts';

const CHROMIUM = '/usr/bin/chromium';
const FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];
const ORG = 'acme';
const CLOCK = `<!doctype html><html><head><title>Clock page</title></head><body><h1>Clock page</h1><p id="stamp">waiting</p>
<script>fetch('/stamp?t=' + Date.now()).then((r) => r.text()).then((t) => { document.getElementById('stamp').textContent = t; });</script></body></html>`;

const s = useLiveCrawlStack(async () => ({
  org: ORG,
  hosts: {
    a: {
      pages: {
        ...realisticAssets(),
        '/': realisticPage({ title: 'Faithful page', scriptLinks: ['/clock'], scriptText: 'Built by its script.' }),
        '/clock': CLOCK,
        '/stamp': { contentType: 'text/plain', body: 'stamped' },
      },
    },
  },
}));

let browser: Browser;
beforeAll(async () => {
  mkdirSync(`${ROOT}test-results/`, { recursive: true });
  browser = await chromium.launch({ executablePath: CHROMIUM, args: FLAGS, headless: true });
});
afterAll(async () => {
  await browser?.close();
});

describe('a crawl with qa', { timeout: 240_000 }, () => {
  it('the API says the setting, the list carries each verdict, and the picker shows good and needs review', async () => {
    const res = await fetch(`${s.api.url}/api/crawls`, {
      method: 'POST',
      headers: await s.as('alice', [ORG]),
      body: JSON.stringify({ seeds: [s.site.url('a', '/')], maxDepth: 1, perHostDelayMs: 300, qa: true }),
    });
    expect(res.status, await res.clone().text()).toBe(202);
    const { crawlId } = (await res.json()) as { crawlId: string };
    expect(((await (await fetch(`${s.api.url}/api/crawls/${crawlId}`, { headers: await s.as('alice', [ORG]) })).json()) as { qa: boolean }).qa).toBe(true);
    const row = await waitForCrawlEnd(s.tdb.db, crawlId, 180_000);
    expect(row.state).toBe('succeeded');
    await drain(s.tdb.db, s.store.client);

    const list = (await (await fetch(`${s.api.url}/api/archives`, { headers: await s.as('alice', [ORG]) })).json()) as {
      url: string;
      qa: { verdict: string; attempts: number } | null;
    }[];
    const byUrl = new Map(list.map((a) => [a.url, a.qa]));
    expect(byUrl.get(s.site.url('a', '/'))).toMatchObject({ verdict: 'good', attempts: 1, misses: 0 });
    expect(byUrl.get(s.site.url('a', '/clock'))).toMatchObject({ verdict: 'review', attempts: 2 });

    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    await page.goto(`${s.api.url}/`);
    await page.fill('#token', await s.issuer.mint({ subject: 'alice', organizations: [ORG] }));
    await page.click('#list');
    const good = page.locator('#archives tr.archive', { hasText: 'Faithful page' }).locator('.qa');
    const review = page.locator('#archives tr.archive', { hasText: 'Clock page' }).locator('.qa');
    await review.waitFor();
    expect(await good.textContent()).toBe('QA: good');
    expect(await review.textContent()).toBe('QA: needs review (captured twice)');
    await page.screenshot({ path: `${ROOT}test-results/picker-qa-1280.png`, fullPage: true });
    await page.close();
  });
});
