// The picker in a real browser (Debian chromium, headless, through playwright-core): each identity
// mode renders its own screen; under dev and JWT the list comes from /api/archives and one click on
// a row has the API sign the archive (can_view) and opens ReplayWeb.page with that signed source,
// which the replay server proxies from the bucket.
// Screenshots go to test-results/.
import type { S3Client } from '@aws-sdk/client-s3';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Archive } from '../../src/db/types.ts';
import { launchTestBrowser, SHOTS } from '../support/browser.ts';
import type { TestApi, TestApiOptions, TestIssuer } from '../support/api.ts';
import type { TestDatabase } from '../support/db.ts';
import type { TestStore } from '../support/fga.ts';
import { useHarness } from '../support/harness.ts';
import { drain, insertArchive, insertJob, insertManyArchives, makeWacz } from '../support/ledger.ts';
import { grant } from '../support/crawls.ts';
import { finishCrawlRow, insertCrawl } from '../../src/store/crawls.ts';
import { replaceLevelDecisions, replaceLevelSkipped } from '../../src/store/decisions.ts';

// no API of the harness's: each identity mode gets one of its own (withApi)
const h = useHarness({ api: false, issuer: true, replay: true, temporal: true });
let tdb: TestDatabase;
let store: TestStore;
let issuer: TestIssuer;
let replayUrl: string;
let browser: Browser;
let acmeNew: Archive;
let acmeOld: Archive;
let s3: S3Client;
let bucket: string;

beforeAll(async () => {
  ({ tdb, store, issuer, s3, bucket } = h);
  replayUrl = h.replay.url;
  const acme = await insertJob(tdb.db, { orgId: 'acme', submittedBy: 'alice' });
  const globex = await insertJob(tdb.db, { orgId: 'globex', submittedBy: 'gina' });
  acmeOld = await insertArchive(tdb.db, {
    crawlId: acme,
    bucket,
    s3,
    capturedAt: new Date('2026-01-01T10:00:00Z'),
    url: 'https://example.test/old',
    body: await makeWacz('https://example.test/old', 'Older acme page'),
  });
  acmeNew = await insertArchive(tdb.db, {
    crawlId: acme,
    bucket,
    s3,
    capturedAt: new Date('2026-02-01T10:00:00Z'),
    url: 'https://example.test/new',
    body: await makeWacz('https://example.test/new', 'Newest acme page'),
  });
  await insertArchive(tdb.db, {
    crawlId: globex,
    bucket,
    s3,
    capturedAt: new Date('2026-03-01T10:00:00Z'),
    url: 'https://example.test/globex',
    body: await makeWacz('https://example.test/globex', 'Globex secret'),
  });
  await drain(tdb.db, store.client);
  browser = await launchTestBrowser();
});

afterAll(async () => {
  await browser?.close();
});

async function withApi(identity: TestApiOptions['identity'], fn: (api: TestApi) => Promise<void>): Promise<void> {
  const api = await h.startApi({ identity, env: { CAPTURE_LEDGER_REPLAY_URL: replayUrl } });
  try {
    await fn(api);
  } finally {
    await api.close();
  }
}

/** Rows shown: the URL column, in order. */
async function rowUrls(page: Page): Promise<string[]> {
  return page.locator('#archives tbody tr.archive td.url').allTextContents();
}

/** Opens the first row's replay link and waits until ReplayWeb.page shows the archived page. */
async function openInReplay(page: Page, title: string, shot: string): Promise<void> {
  const link = page.locator('#archives tbody tr.archive a.open').first();
  const [popup] = await Promise.all([page.context().waitForEvent('page'), link.click()]);
  // one click: the tab lands on replay with a signed source for exactly this archive's key
  await popup.waitForURL((u) => u.href.startsWith(`${replayUrl}/?source=`), { timeout: 15_000 });
  const source = new URL(popup.url()).searchParams.get('source')!;
  expect(source.startsWith(`/wacz/${acmeNew.object_key}?`)).toBe(true);
  expect(new URLSearchParams(source.slice(source.indexOf('?'))).get('X-Amz-Signature')).toMatch(/^[0-9a-f]{64}$/);
  await popup.waitForLoadState('domcontentloaded');
  // ReplayWeb.page loads the WACZ through its service worker and lists its pages; the title sits
  // in a <keyword-mark> four shadow roots down (CSS locators pierce open shadow roots)
  try {
    const entry = popup.locator(`keyword-mark[title="${title}"]`);
    await entry.first().waitFor({ state: 'visible', timeout: 45_000 });
    expect(await entry.first().textContent()).toBe(title);
    await popup.screenshot({ path: `${SHOTS}${shot.replace('.png', '-pages.png')}` });
    // open the page: the archived HTML itself is replayed in a frame
    await entry.first().click();
    const deadline = Date.now() + 30_000;
    let frameText = '';
    while (Date.now() < deadline) {
      const frame = popup.frames().find((f) => f.url().includes('example.test/new'));
      frameText = frame
        ? ((await frame
            .locator('h1')
            .textContent({ timeout: 1000 })
            .catch(() => '')) ?? '')
        : '';
      if (frameText === title) break;
      await popup.waitForTimeout(250);
    }
    expect(frameText).toBe(title);
  } catch (err) {
    await popup.screenshot({ path: `${SHOTS}failed-${shot}` });
    throw err;
  }
  await popup.screenshot({ path: `${SHOTS}${shot}` });
  await popup.close();
}

describe('the picker in a browser', { timeout: 120_000 }, () => {
  it('with no identity configured: only a notice, no form', async () => {
    await withApi('none', async (api) => {
      const page = await browser.newPage();
      await page.goto(`${api.url}/`);
      await expect(page.locator('#notice').textContent()).resolves.toContain('identifies nobody');
      expect(await page.locator('form, input, textarea, #archives').count()).toBe(0);
      await page.screenshot({ path: `${SHOTS}picker-none.png` });
      await page.close();
    });
  });

  it('with dev identity: two name fields, the list through the API, a row opens replay', async () => {
    await withApi('dev', async (api) => {
      const context = await browser.newContext();
      const page = await context.newPage();
      await page.goto(`${api.url}/`);
      expect(await page.locator('#token').count()).toBe(0);
      // no subject: the API's 401 is explained
      await page.click('#list');
      expect(await page.locator('#subject:invalid').count()).toBe(1); // the form asks for it first
      await page.fill('#subject', 'bob');
      await page.fill('#organizations', 'acme');
      await page.click('#list');
      await page.locator('#archives tbody tr.archive').nth(1).waitFor();
      expect(await rowUrls(page)).toEqual(['https://example.test/new', 'https://example.test/old']);
      await expect(page.locator('#status').textContent()).resolves.toBe('2 archives shown.');
      await page.screenshot({ path: `${SHOTS}picker-dev.png` });
      // someone outside acme sees nothing
      await page.fill('#subject', 'dave');
      await page.fill('#organizations', '');
      await page.click('#list');
      await page.locator('#status', { hasText: 'No archives you may see.' }).waitFor();
      expect(await rowUrls(page)).toEqual([]);
      // back as a member, and open the newest in replay
      await page.fill('#subject', 'bob');
      await page.fill('#organizations', 'acme');
      await page.click('#list');
      await page.locator('#archives tbody tr.archive').nth(1).waitFor();
      await openInReplay(page, 'Newest acme page', 'replay-dev.png');
      await context.close();
    });
  });

  it('with JWT identity: a token field; a bad token is explained; a good one lists and opens', async () => {
    await withApi({ oidc: { url: issuer.url }, devAlsoSet: true }, async (api) => {
      const context = await browser.newContext();
      const page = await context.newPage();
      await page.goto(`${api.url}/`);
      expect(await page.locator('#subject').count()).toBe(0);
      await page.fill('#token', 'not-a-token');
      await page.click('#list');
      await page.locator('#status.error', { hasText: '401' }).waitFor();
      await page.fill('#token', await issuer.mint({ subject: 'gina', organizations: ['globex'] }));
      await page.click('#list');
      await page.locator('#archives tbody tr.archive').first().waitFor();
      expect(await rowUrls(page)).toEqual(['https://example.test/globex']);
      await page.fill('#token', await issuer.mint({ subject: 'alice', organizations: [] }));
      await page.click('#list');
      await page.locator('#archives tbody tr.archive').nth(1).waitFor();
      expect(await rowUrls(page)).toEqual(['https://example.test/new', 'https://example.test/old']);
      await page.screenshot({ path: `${SHOTS}picker-jwt.png` });
      await openInReplay(page, 'Newest acme page', 'replay-jwt.png');
      await context.close();
      expect(acmeOld.id).not.toBe(acmeNew.id);
    });
  });
});

describe('the Crawls view in a browser', { timeout: 120_000 }, () => {
  it('lists crawls, shows one crawl with its pacing audit and decisions, and polls a running crawl until it ends', async () => {
    await grant(store.client, 'carol', 'submitter', 'acme');
    const t0 = new Date('2026-04-01T10:00:00.000Z');
    /** a crawl row of carol's for acme, with these seed pages, without a workflow */
    const crawlRow = (seeds: string[], maxDepth: number, perHostDelayMs: number) =>
      insertCrawl(tdb.db, {
        orgId: 'acme',
        submittedBy: 'carol',
        seeds,
        rules: [{ follow: 'same-origin' }],
        maxDepth,
        maxPages: 30,
        perHostDelayMs,
        hostParallelism: 1,
        formats: ['wacz'],
        signing: false,
        seedLevel: { take: seeds, cut: [] },
      });
    const finished = await crawlRow(['https://a.test/', 'https://a.test/two'], 1, 2000);
    // two captures on a.test, 2,000 ms apart from finish to submit: the audit owes 2000 and finds 0 short
    for (const [url, submitted] of [
      ['https://a.test/', 0],
      ['https://a.test/two', 2100],
    ] as const) {
      await tdb.db
        .updateTable('crawl_pages')
        .set({ state: 'captured', submitted_at: new Date(t0.getTime() + submitted), finished_at: new Date(t0.getTime() + submitted + 100) })
        .where('crawl_id', '=', finished.id)
        .where('url', '=', url)
        .execute();
    }
    const skipped = ['https://elsewhere.test/', 'https://elsewhere.test/a', 'https://elsewhere.test/b'];
    await replaceLevelDecisions(tdb.db, finished.id, 0, [{ rule: 0, action: 'skip', hostname: 'elsewhere.test', links: 3, samples: skipped.slice(0, 1) }]);
    // pagesDiscovered counts each skipped URL once per crawl, from what admission records
    await replaceLevelSkipped(tdb.db, finished.id, 0, skipped);
    await finishCrawlRow(tdb.db, finished.id, { state: 'succeeded', stopReason: 'max_depth' });
    const running = await crawlRow(['https://b.test/', 'https://b.test/2'], 0, 0);
    await tdb.db.updateTable('crawls').set({ dispatched_depth: 0 }).where('id', '=', running.id).execute();

    const api = await h.startApi({
      identity: 'dev',
      env: {
        CAPTURE_LEDGER_REPLAY_URL: replayUrl,
        CAPTURE_LEDGER_CRAWL_WEBHOOK_URL: 'http://127.0.0.2:9/crawl',
        CAPTURE_LEDGER_CRAWL_WEBHOOK_TOKEN: 'picker-test',
      },
      deps: { temporal: h.temporal },
    });
    const context = await browser.newContext();
    try {
      const page = await context.newPage();
      await page.goto(`${api.url}/`);
      await page.fill('#subject', 'carol');
      await page.fill('#organizations', 'acme');
      await page.click('nav button[data-view="crawls"]');
      await page.locator('#crawls tbody tr.crawl').nth(1).waitFor();
      expect(await page.locator('#archives-view').isHidden()).toBe(true);
      const rows = page.locator('#crawls tbody tr.crawl');
      // newest first: the two crawls above, then the jobs the archives hang off (started in beforeAll)
      expect(
        (await rows.evaluateAll((trs) => trs.map((tr) => [(tr as HTMLElement).dataset.id, tr.children[2]!.textContent, tr.children[3]!.textContent]))).slice(
          0,
          2,
        ),
      ).toEqual([
        [running.id, 'running', ''],
        [finished.id, 'succeeded', 'max_depth'],
      ]);

      // the finished crawl: state, stopReason, the pacing audit and its decisions
      await page.locator(`#crawls tr.crawl[data-id="${finished.id}"] a.show`).click();
      await page.locator('#pacing tbody tr.pacing-host').first().waitFor();
      const field = (name: string) => page.locator(`#crawl-summary dd[data-field="${name}"]`).textContent();
      expect(await field('State')).toBe('succeeded');
      expect(await field('Stop reason')).toBe('max_depth');
      // two pages and the three links no rule took
      expect(await field('Pages discovered')).toBe('5');
      expect(await page.locator('#pacing tbody tr.pacing-host').first().locator('td').allTextContents()).toEqual(['a.test', '2', '2000 ms', '2000 ms', '0']);
      await expect(page.locator('#pacing-note').textContent()).resolves.toContain('no host was visited sooner');
      expect(await page.locator('#decisions tbody tr.decision').first().locator('td').allTextContents()).toEqual([
        '0',
        '0',
        'skip',
        'elsewhere.test',
        '3',
        'https://elsewhere.test/',
      ]);
      await page.screenshot({ path: `${SHOTS}picker-crawl-finished.png`, fullPage: true });

      // the running crawl: its progress refreshes on its own while the ledger moves, and stops once it ends
      await page.locator(`#crawls tr.crawl[data-id="${running.id}"] a.show`).click();
      const level0 = page.locator('#progress-levels tbody tr.level').first();
      await page.locator('#crawl-summary dd[data-field="State"]', { hasText: 'running' }).waitFor();
      await level0.waitFor();
      // depth, pages, dispatched (no workflow to ask: blank), captured, failed, skipped, pending, cut, flow
      expect(await level0.locator('td').allTextContents()).toEqual(['0', '2', '', '0', '0', '0', '2', '0', '']);
      await tdb.db.updateTable('crawl_pages').set({ state: 'captured' }).where('crawl_id', '=', running.id).where('url', '=', 'https://b.test/').execute();
      await page.locator('#progress-levels tbody tr.level td:nth-child(4)', { hasText: '1' }).waitFor({ timeout: 15_000 });
      expect(await level0.locator('td').allTextContents()).toEqual(['0', '2', '', '1', '0', '0', '1', '0', '']);
      await finishCrawlRow(tdb.db, running.id, { state: 'succeeded', stopReason: 'completed' });
      await page.locator('#crawl-summary dd[data-field="Stop reason"]', { hasText: 'completed' }).waitFor({ timeout: 15_000 });
      expect(await field('State')).toBe('succeeded');
      await page.screenshot({ path: `${SHOTS}picker-crawl-polled.png`, fullPage: true });

      // someone without can_submit sees no crawls, and is told why
      await page.fill('#subject', 'bob');
      await page.click('#list');
      await page.locator('#status', { hasText: 'No crawls you may see' }).waitFor();
      expect(await rows.count()).toBe(0);
    } finally {
      await context.close();
      await api.close();
    }
  });
});

describe("the archive list's More in a browser", { timeout: 120_000 }, () => {
  it('60 archives sharing one capturedAt: 50, then the 10 others, none lost and none twice', async () => {
    const job = await insertJob(tdb.db, { orgId: 'initech', submittedBy: 'ivan' });
    const ids = await insertManyArchives(tdb.db, job, bucket, 60);
    await tdb.db
      .updateTable('archives')
      .set({ captured_at: new Date('2026-05-05T05:05:05.555Z') })
      .where('id', 'in', ids)
      .execute();
    await drain(tdb.db, store.client);
    await withApi('dev', async (api) => {
      const context = await browser.newContext();
      const page = await context.newPage();
      await page.goto(`${api.url}/`);
      await page.fill('#subject', 'ivan');
      await page.fill('#organizations', 'initech');
      await page.click('#list');
      const rows = page.locator('#archives tbody tr.archive');
      await rows.nth(49).waitFor();
      expect(await rows.count()).toBe(50);
      await page.click('#more');
      await rows.nth(59).waitFor();
      await page.locator('#more[hidden]').waitFor({ state: 'attached' });
      const shown = await rows.evaluateAll((trs) => trs.map((tr) => (tr as HTMLElement).dataset.id!));
      expect(shown).toHaveLength(60);
      expect(new Set(shown)).toEqual(new Set(ids));
      await context.close();
    });
  });
});
