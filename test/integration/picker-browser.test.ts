// The picker in a real browser (Debian chromium, headless, through playwright-core): each identity
// mode renders its own screen; under dev and JWT the list comes from /api/archives and one click on
// a row has the API sign the archive (can_view) and opens ReplayWeb.page with that signed source,
// which the replay server proxies from the bucket.
// Screenshots go to test-results/.
import { mkdirSync } from 'node:fs';
import type { FastifyInstance } from 'fastify';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Archive } from '../../src/db/types.ts';
import { buildReplayServer } from '../../src/replay/server.ts';
import { createS3 } from '../../src/s3/client.ts';
import { startTestApi, startTestIssuer, type TestApi, type TestIssuer } from '../support/api.ts';
import { createTestDatabase, type TestDatabase } from '../support/db.ts';
import { ROOT } from '../support/env.ts';
import { createTestStore, type TestStore } from '../support/fga.ts';
import { drain, insertArchive, insertJob, makeWacz } from '../support/ledger.ts';
import { testConfig } from '../support/config.ts';

const CHROMIUM = '/usr/bin/chromium';
const FLAGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];
const SHOTS = `${ROOT}test-results/`;

let tdb: TestDatabase;
let store: TestStore;
let issuer: TestIssuer;
let replay: FastifyInstance;
let replayUrl: string;
let browser: Browser;
let acmeNew: Archive;
let acmeOld: Archive;
const s3 = createS3(testConfig({ CAPTURE_LEDGER_FGA_STORE_ID: 'unused', CAPTURE_LEDGER_FGA_MODEL_ID: 'unused' }).s3);

beforeAll(async () => {
  mkdirSync(SHOTS, { recursive: true });
  [tdb, store, issuer] = await Promise.all([createTestDatabase(), createTestStore(), startTestIssuer()]);
  const bucket = testConfig({ CAPTURE_LEDGER_FGA_STORE_ID: 'unused', CAPTURE_LEDGER_FGA_MODEL_ID: 'unused' }).s3.bucket;
  const acme = await insertJob(tdb.db, { orgId: 'acme', submittedBy: 'alice' });
  const globex = await insertJob(tdb.db, { orgId: 'globex', submittedBy: 'gina' });
  acmeOld = await insertArchive(tdb.db, { crawlId: acme, bucket, s3, capturedAt: new Date('2026-01-01T10:00:00Z'), url: 'https://example.test/old', body: await makeWacz('https://example.test/old', 'Older acme page') });
  acmeNew = await insertArchive(tdb.db, { crawlId: acme, bucket, s3, capturedAt: new Date('2026-02-01T10:00:00Z'), url: 'https://example.test/new', body: await makeWacz('https://example.test/new', 'Newest acme page') });
  await insertArchive(tdb.db, { crawlId: globex, bucket, s3, capturedAt: new Date('2026-03-01T10:00:00Z'), url: 'https://example.test/globex', body: await makeWacz('https://example.test/globex', 'Globex secret') });
  await drain(tdb.db, store.client);
  replay = await buildReplayServer({ endpoint: testConfig({ CAPTURE_LEDGER_FGA_STORE_ID: 'unused', CAPTURE_LEDGER_FGA_MODEL_ID: 'unused' }).s3.endpoint, bucket });
  replayUrl = await replay.listen({ host: '127.0.0.1', port: 0 });
  browser = await chromium.launch({ executablePath: CHROMIUM, args: FLAGS, headless: true });
});

afterAll(async () => {
  await browser?.close();
  await replay?.close();
  await issuer?.close();
  await tdb?.drop();
  s3.destroy();
});

async function withApi(identity: Parameters<typeof startTestApi>[0]['identity'], fn: (api: TestApi) => Promise<void>): Promise<void> {
  const api = await startTestApi({ tdb, store, identity, env: { CAPTURE_LEDGER_REPLAY_URL: replayUrl } });
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
      frameText = frame ? ((await frame.locator('h1').textContent({ timeout: 1000 }).catch(() => '')) ?? '') : '';
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
