// The picker after and during a real crawl (the reference flow, Chromium capturing a three-host
// test site with png among its formats), in real Chromium: the crawl's page follows it while it
// runs (hosts in flight, counts rising without a reload) and draws one pacing series per host
// once it ends; each archive row shows its screenshot, signed for the caller (and refused, 404, to
// one who may not view the archive); searching for a word on one page finds that page, and one
// click opens it in replay. Screenshots at 1280 and 390 px go to test-results/.
import { randomBytes } from 'node:crypto';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSearchIndex } from '../../src/search/client.ts';
import { launchTestBrowser, SHOTS } from '../support/browser.ts';
import { eventually, waitForCrawlEnd } from '../support/crawls.ts';
import { drain } from '../support/ledger.ts';
import { useLiveCrawlStack } from '../support/live-crawl.ts';

const ORG = 'acme';
const INDEX = `cl-test-picker-live-${randomBytes(4).toString('hex')}`;
const OPENSEARCH = 'http://127.0.0.1:9200';
const DELAY = 1500;
const WIDTHS = [1280, 390] as const;

/** host name → three pages below its front page; one page of c alone says "quokka" */
const SUB = ['/one', '/two', '/three'];
const siteHost = (name: string) => ({
  pages: {
    '/': `<title>Front of ${name}</title><h1>Front of ${name}</h1>${SUB.map((p) => `<a href="${p}">${p}</a>`).join(' ')}`,
    ...Object.fromEntries(
      SUB.map((p) => [
        p,
        `<title>${name}${p}</title><h1>${name}${p}</h1><p>${name === 'c' && p === '/two' ? 'A quokka smiled at the camera.' : `Plain page ${p} of ${name}.`}</p>`,
      ]),
    ),
  },
  delayMs: 100,
});

let browser: Browser;
// the replay server (the API's CAPTURE_LEDGER_REPLAY_URL) is the harness's
const s = useLiveCrawlStack({
  org: ORG,
  hosts: { a: siteHost('a'), b: siteHost('b'), c: siteHost('c') },
  // heartbeats every 200 ms, passed on to the workflow every second (a quarter of the window)
  flow: { heartbeatIntervalMs: 200 },
  env: {
    CAPTURE_LEDGER_CAPTURE_FORMATS: 'wacz,png',
    CAPTURE_LEDGER_LEVEL_LIVENESS_SECONDS: '4',
    CAPTURE_LEDGER_OPENSEARCH_URL: OPENSEARCH,
    CAPTURE_LEDGER_OPENSEARCH_INDEX: INDEX,
  },
  replay: true,
});

let crawlId: string;

beforeAll(async () => {
  browser = await launchTestBrowser();
});

afterAll(async () => {
  await browser?.close();
  const search = createSearchIndex({ url: OPENSEARCH, index: INDEX });
  await search.client.indices.delete({ index: INDEX }, { ignore: [404] });
  await search.client.close();
});

async function signedIn(width: number = WIDTHS[0]): Promise<Page> {
  const page = await browser.newPage({ viewport: { width, height: 900 } });
  await page.goto(`${s.api.url}/`);
  await page.fill('#token', await s.issuer.mint({ subject: 'alice', organizations: [ORG] }));
  return page;
}

async function shots(page: Page, name: string): Promise<void> {
  for (const width of WIDTHS) {
    await page.setViewportSize({ width, height: 900 });
    await page.screenshot({ path: `${SHOTS}${name}-${width}.png`, fullPage: true });
  }
  await page.setViewportSize({ width: WIDTHS[0], height: 900 });
}

const cellNumber = async (page: Page, field: string): Promise<number> => Number(await page.locator(`#crawl-summary dd[data-field="${field}"]`).textContent());

describe('the picker follows a live crawl, then shows and finds what it captured', { timeout: 240_000 }, () => {
  it('while a three-host crawl with delays runs, its page shows the hosts in flight and the counts rise without a reload; after it ends, one pacing series per host', async () => {
    const res = await fetch(`${s.api.url}/api/crawls`, {
      method: 'POST',
      headers: await s.as('alice', [ORG]),
      body: JSON.stringify({ seeds: ['a', 'b', 'c'].map((h) => s.site.url(h, '/')), maxDepth: 1, perHostDelayMs: DELAY, hostParallelism: 3 }),
    });
    expect(res.status, await res.clone().text()).toBe(202);
    crawlId = ((await res.json()) as { crawlId: string }).crawlId;

    const page = await signedIn();
    await page.click('nav button[data-view="crawls"]');
    await page.locator(`#crawls tr.crawl[data-id="${crawlId}"] a.show`).click();
    await page.locator('#crawl-summary dd[data-field="State"]', { hasText: 'running' }).waitFor();
    // the page is never reloaded from here on: a mark set now is still there at the end
    await page.evaluate(() => Object.assign(window, { pickerMark: 'unreloaded' }));
    const capturedAtFirst = await cellNumber(page, 'Captured');

    // hosts in flight, as the flow's heartbeats report them
    const hostNames = ['a', 'b', 'c'].map((h) => s.site.hosts[h]!.host);
    // read in one go: a poll may replace the table (between levels it is empty) at any moment
    const shownHosts = await page.waitForFunction(
      () => {
        const cells = [...document.querySelectorAll('#progress-hosts tbody tr.host td:first-child')].map((td) => td.textContent ?? '');
        return cells.length > 0 ? cells : null;
      },
      undefined,
      { timeout: 60_000, polling: 100 },
    );
    const inFlight = (await shownHosts.jsonValue()) as string[];
    expect(inFlight.length).toBeGreaterThan(0);
    for (const h of inFlight) expect(hostNames).toContain(h);
    await shots(page, 'picker-crawl-live');

    // the counts rise on their own
    await page.waitForFunction(
      ([before]) => Number(document.querySelector('#crawl-summary dd[data-field="Captured"]')?.textContent) > before!,
      [capturedAtFirst],
      { timeout: 90_000, polling: 250 },
    );
    const row = await waitForCrawlEnd(s.tdb.db, crawlId, 120_000);
    expect(row.state).toBe('succeeded');
    await page.locator('#crawl-summary dd[data-field="State"]', { hasText: 'succeeded' }).waitFor({ timeout: 15_000 });
    expect(await cellNumber(page, 'Captured')).toBe(12);
    // the crawl's row in the list follows its page
    expect(await page.locator(`#crawls tr.crawl[data-id="${crawlId}"] td:nth-child(3)`).textContent()).toBe('succeeded');
    expect(await page.evaluate(() => (window as unknown as { pickerMark?: string }).pickerMark)).toBe('unreloaded');

    // the pacing chart: one series per host, each gap drawn, none under the delay owed
    const series = page.locator('#pacing-chart g.series');
    await series.nth(2).waitFor();
    expect((await series.evaluateAll((gs) => gs.map((g) => g.getAttribute('data-host')))).sort()).toEqual([...hostNames].sort());
    for (const h of hostNames) expect(await page.locator(`#pacing-chart g.series[data-host="${h}"] circle`).count()).toBe(3);
    expect(await page.locator('#pacing-chart circle.short').count()).toBe(0);
    // the decisions table is fetched on its own: wait for its first row (cold CI counted it unrendered once)
    await page.locator('#decisions tbody tr.decision').first().waitFor({ timeout: 15_000 });
    expect(await page.locator('#decisions tbody tr.decision').count()).toBeGreaterThan(0);
    await shots(page, 'picker-crawl-ended');
    await page.close();
  });

  it('each archive row shows its screenshot, which decodes; the thumbnail URL refuses a caller who may not view the archive', async () => {
    await drain(s.tdb.db, s.store.client);
    const page = await signedIn();
    await page.click('#list');
    const rows = page.locator('#archives tbody tr.archive');
    await rows.nth(11).waitFor();
    expect(await rows.count()).toBe(12);
    // titles and URLs as captured
    expect(await page.locator('#archives tbody tr.archive td.title', { hasText: 'c/two' }).count()).toBe(1);
    const imgs = page.locator('#archives tbody tr.archive td.thumb img');
    expect(await imgs.count()).toBe(12);
    await page.waitForFunction(
      () => [...document.querySelectorAll<HTMLImageElement>('#archives td.thumb img')].every((i) => i.complete && i.src !== ''),
      undefined,
      { timeout: 30_000 },
    );
    const widths = await imgs.evaluateAll((is) => is.map((i) => (i as HTMLImageElement).naturalWidth));
    for (const w of widths) expect(w).toBeGreaterThan(0);
    await shots(page, 'picker-archives-thumbnails');
    await page.close();

    const archive = await s.tdb.db.selectFrom('archives').select(['id']).where('url', '=', s.site.url('c', '/two')).executeTakeFirstOrThrow();
    const thumb = (headers: Record<string, string>) => fetch(`${s.api.url}/api/archives/${archive.id}/thumbnail-url`, { method: 'POST', headers });
    const mine = await thumb(await s.issuer.auth('alice', [ORG]));
    expect(mine.status).toBe(200);
    const signed = (await mine.json()) as { url: string; expiresIn: number };
    expect(signed.expiresIn).toBeLessThanOrEqual(300);
    const png = await fetch(signed.url);
    expect(png.status).toBe(200);
    expect(Buffer.from(await png.arrayBuffer()).subarray(0, 8)).toEqual(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]));
    // someone outside acme: the same 404 as for an archive that does not exist
    const theirs = await thumb(await s.issuer.auth('mallory', ['initech']));
    expect(theirs.status).toBe(404);
    expect(await theirs.json()).toEqual({ error: 'not found' });
  });

  it('searching for a word on one page finds that page, with the word marked; one click opens it in replay', async () => {
    // the workflow indexes the crawl when it ends; indexed_at is set once the pages are searchable
    await eventually(
      async () => {
        const r = await s.tdb.db
          .selectFrom('archives')
          .select((eb) => eb.fn.countAll<string>().as('n'))
          .where('indexed_at', 'is not', null)
          .executeTakeFirstOrThrow();
        return Number(r.n) === 12 ? true : undefined;
      },
      30_000,
      'the crawl indexed',
    );
    const page = await signedIn(390);
    await page.locator('#search:not([hidden])').waitFor();
    await page.fill('#q', 'quokka');
    await page.press('#q', 'Enter');
    const hits = page.locator('#hits tbody tr.hit');
    await hits.first().waitFor();
    expect(await hits.count()).toBe(1);
    expect(await hits.first().locator('.url').textContent()).toBe(s.site.url('c', '/two'));
    expect(await hits.first().locator('.title').textContent()).toBe('c/two');
    expect(await hits.first().locator('.snippet mark').allTextContents()).toEqual(['quokka']);
    expect(await hits.first().locator('time').getAttribute('datetime')).toMatch(/^\d{4}-\d\d-\d\dT/);
    await shots(page, 'picker-search');

    const [popup] = await Promise.all([page.context().waitForEvent('page'), hits.first().locator('a.open').click()]);
    await popup.waitForURL((u) => u.href.includes('/?source='), { timeout: 15_000 });
    try {
      // ReplayWeb.page lists the WACZ's page; opening it replays the archived HTML in a frame
      const entry = popup.locator('keyword-mark[title="c/two"]');
      await entry.first().waitFor({ state: 'visible', timeout: 45_000 });
      await entry.first().click();
      await eventually(
        async () => {
          const frame = popup.frames().find((f) => f.url().includes('/two'));
          const text = frame
            ? await frame
                .locator('h1')
                .textContent({ timeout: 1000 })
                .catch(() => null)
            : null;
          return text === 'c/two' ? text : undefined;
        },
        30_000,
        'the page replayed',
      );
      await popup.screenshot({ path: `${SHOTS}picker-search-replay.png` });
    } catch (err) {
      await popup.screenshot({ path: `${SHOTS}failed-picker-search-replay.png` });
      throw err;
    }
    await page.close();
  });

  it('is keyboard reachable, and puts a refused token in words', async () => {
    const page = await browser.newPage();
    await page.goto(`${s.api.url}/`);
    await page.fill('#token', 'eyJhbGciOiJIUzI1NiJ9.e30.x');
    await page.keyboard.press('Tab');
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('list');
    await page.keyboard.press('Enter');
    await page.locator('#status.error', { hasText: '401' }).waitFor();
    expect(await page.locator('#status').textContent()).toContain('the token has expired');
    // a good token, then Tab from the List button on: the archive rows' replay links come in order
    await page.fill('#token', await s.issuer.mint({ subject: 'alice', organizations: [ORG] }));
    await page.focus('#list');
    await page.keyboard.press('Enter');
    await page.locator('#archives tbody tr.archive').nth(11).waitFor();
    let reached = '';
    for (let i = 0; i < 20 && reached !== 'open'; i++) {
      await page.keyboard.press('Tab');
      reached = await page.evaluate(() => (document.activeElement as HTMLElement | null)?.className ?? '');
    }
    expect(reached).toBe('open');
    await page.close();
  });
});
