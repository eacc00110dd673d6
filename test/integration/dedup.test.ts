// Each payload stored once within a crawl (issue 26), over the real stack: a crawl of a site whose
// pages share a stylesheet, a script and a font, captured in Chromium by the reference flow. The
// seed's WACZ holds them in full; every later page's WARC holds revisit records of them (read with
// warcio.js) and requires the seed's archive, which the ledger keeps; every page replays styled in
// the project's replay from signed sources only; deleting the required archive is 409 naming the
// archives that need it.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { GetObjectCommand } from '@aws-sdk/client-s3';
import { chromium, type Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { replayLink } from '../../src/api/picker.ts';
import { REVISIT_PROFILE } from '../../src/domain/wacz/dedup.ts';
import { readWacz, waczProblems } from '../../src/domain/wacz/read.ts';
import { WARC_PATH } from '../../src/domain/wacz/write.ts';
import { CHROMIUM_PATH } from '../../src/flow/browser/launch.ts';
import { waitForCrawlEnd } from '../support/crawls.ts';
import { drain } from '../support/ledger.ts';
import { useLiveCrawlStack } from '../support/live-crawl.ts';
import { ttfFont } from '../support/site.ts';
import { run, startWayback, TOOLS } from '../support/archive-tools.ts';
import { readWithWarcio } from '../support/warcio.ts';

const ORG = 'acme';
const PAGES = ['/p1', '/p2', '/p3'];
// long enough to be worth a revisit (DEDUP_LIMITS.minPayloadBytes)
const CSS = `@font-face { font-family: "TestMono"; src: url("/assets/mono.ttf") format("truetype"); }\nbody { font-family: "TestMono", serif; background-color: rgb(1, 2, 3); color: rgb(250, 250, 250); }\n${'/* shared by every page */\n'.repeat(40)}`;
const JS = `document.getElementById('built').textContent = 'built by the shared script';\n${'// shared by every page\n'.repeat(40)}`;
const SHARED = ['/assets/site.css', '/assets/app.js', '/assets/mono.ttf'];

const page = (title: string, links: string[]): string =>
  `<!doctype html><html><head><meta charset="utf-8"><title>${title}</title><link rel="stylesheet" href="/assets/site.css"></head><body><h1>${title}</h1><p id="built"></p>${links.map((l) => `<a href="${l}">${l}</a>`).join(' ')}<script src="/assets/app.js"></script></body></html>`;

const h = useLiveCrawlStack({
  org: ORG,
  hosts: {
    a: {
      pages: {
        '/': page('Home', PAGES),
        ...Object.fromEntries(PAGES.map((p) => [p, page(`Page ${p}`, [])])),
        '/assets/site.css': { contentType: 'text/css', body: CSS },
        '/assets/app.js': { contentType: 'text/javascript', body: JS },
        '/assets/mono.ttf': { contentType: 'font/ttf', body: ttfFont() },
      },
    },
  },
  env: { CAPTURE_LEDGER_LEVEL_TIMEOUT_SECONDS: '60' },
  replay: true,
});

interface Captured {
  id: string;
  url: string;
  key: string;
  /** the version its capture wrote (archives.object_version) */
  version: string | null;
  depth: number;
  wacz: Buffer;
}

let crawled: Captured[] = [];
let viewer: Browser;
let replayUrl: string;

async function objectBytes(key: string): Promise<Buffer> {
  const res = await h.s3.send(new GetObjectCommand({ Bucket: h.bucket, Key: key }));
  return Buffer.from(await res.Body!.transformToByteArray());
}

/** the caller's identity without a content type: these requests have no body */
async function as(subject: string, orgs: string[]): Promise<Record<string, string>> {
  const { 'content-type': _json, ...rest } = await h.as(subject, orgs);
  return rest;
}

async function sign(
  id: string,
): Promise<{ status: number; body: { url: string; requires?: { id: string; objectKey: string; url: string }[]; withheld?: number } }> {
  const res = await fetch(`${h.api.url}/api/archives/${id}/url`, { method: 'POST', headers: await as('alice', [ORG]) });
  return { status: res.status, body: (await res.json()) as never };
}

beforeAll(async () => {
  const res = await fetch(`${h.api.url}/api/crawls`, {
    method: 'POST',
    headers: await h.as('alice', [ORG]),
    body: JSON.stringify({ seeds: [h.site.url('a', '/')], maxDepth: 1, perHostDelayMs: 0 }),
  });
  expect(res.status, await res.clone().text()).toBe(202);
  const { crawlId } = (await res.json()) as { crawlId: string };
  expect(await waitForCrawlEnd(h.tdb.db, crawlId, 120_000)).toMatchObject({ state: 'succeeded' });
  await drain(h.tdb.db, h.store.client);
  const rows = await h.tdb.db
    .selectFrom('archives')
    .innerJoin('crawl_pages', 'crawl_pages.task_id', 'archives.task_id')
    .select(['archives.id', 'archives.url', 'archives.object_key', 'archives.object_version', 'crawl_pages.depth'])
    .where('crawl_pages.crawl_id', '=', crawlId)
    .orderBy('crawl_pages.depth')
    .orderBy('archives.url')
    .execute();
  crawled = await Promise.all(
    rows.map(async (r) => ({ id: r.id, url: r.url, key: r.object_key, version: r.object_version, depth: r.depth, wacz: await objectBytes(r.object_key) })),
  );
  viewer = await chromium.launch({
    executablePath: CHROMIUM_PATH,
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
  replayUrl = h.replay.url;
}, 180_000);

afterAll(async () => {
  await viewer?.close();
});

async function warcOf(c: Captured) {
  const w = await readWacz(c.wacz);
  expect(waczProblems(w)).toEqual([]);
  return { datapackage: w.datapackage, records: await readWithWarcio(w.entries.get(WARC_PATH)!.data) };
}

describe('payloads stored once within a crawl', { timeout: 180_000 }, () => {
  it('the seed stores the shared assets in full; every later page holds revisit records of them and requires the seed', async () => {
    expect(crawled.map((c) => [c.url, c.depth])).toEqual([[h.site.url('a', '/'), 0], ...PAGES.map((p) => [h.site.url('a', p), 1])]);
    const [seed, ...later] = crawled;
    const first = await warcOf(seed!);
    const seedResponses = new Map(first.records.filter((r) => r.type === 'response').map((r) => [r.uri, r]));
    for (const path of SHARED) expect(seedResponses.has(h.site.url('a', path)), path).toBe(true);
    expect(first.records.some((r) => r.type === 'revisit')).toBe(false);
    expect(first.datapackage.requires).toBeUndefined();

    for (const c of later) {
      const { datapackage, records } = await warcOf(c);
      expect(datapackage.requires).toEqual([seed!.key]);
      for (const path of SHARED) {
        const url = h.site.url('a', path);
        const revisit = records.find((r) => r.uri === url);
        expect(revisit?.type, `${c.url} ${path}`).toBe('revisit');
        const original = seedResponses.get(url)!;
        expect(revisit!.header('WARC-Profile')).toBe(REVISIT_PROFILE);
        expect(revisit!.header('WARC-Refers-To-Target-URI')).toBe(url);
        expect(revisit!.header('WARC-Refers-To-Date')).toBe(original.header('WARC-Date'));
        expect(revisit!.header('WARC-Payload-Digest')).toBe(original.header('WARC-Payload-Digest'));
        expect(revisit!.status).toBe(200);
        expect(revisit!.content).toBe('');
      }
      // the page itself is its own
      expect(records.find((r) => r.uri === c.url)?.type).toBe('response');
      expect(c.wacz.length).toBeLessThan(seed!.wacz.length / 4);
    }
  });

  it('every WACZ passes wacz validate and warcio check; pywb serves a later page’s stylesheet through its revisit from the seed’s WARC', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'dedup-readers-'));
    try {
      const root = join(dir, 'pywb');
      mkdirSync(root);
      await run(`${TOOLS}wb-manager`, ['init', 'captures'], { cwd: root });
      for (const [i, c] of crawled.entries()) {
        const file = join(dir, `page-${i}.wacz`);
        writeFileSync(file, c.wacz);
        const validated = await run(`${TOOLS}wacz`, ['validate', '-f', file]);
        expect(`${validated.stdout}${validated.stderr}`, c.url).not.toMatch(/error|invalid|fail/i);
        const warc = join(dir, `page-${i}.warc.gz`);
        writeFileSync(warc, (await readWacz(c.wacz)).entries.get(WARC_PATH)!.data);
        // -v names every record it checked; a failed digest makes warcio exit non-zero (run throws)
        const checked = await run(`${TOOLS}warcio`, ['check', '-v', warc]);
        expect(checked.stdout, c.url).not.toMatch(/digest (failed|fail)/i);
        // each page's WARC under its own name, so one collection holds them all
        await run(`${TOOLS}wb-manager`, ['add', 'captures', warc], { cwd: root });
      }
      const later = crawled.at(-1)!;
      const css = h.site.url('a', '/assets/site.css');
      const revisit = (await warcOf(later)).records.find((r) => r.uri === css)!;
      expect(revisit.type).toBe('revisit');
      const stamp = revisit.header('WARC-Date')!.replace(/\D/g, '').slice(0, 14);
      const wayback = await startWayback(root);
      try {
        const res = await fetch(`${wayback.origin}/captures/${stamp}id_/${css}`);
        expect(res.status).toBe(200);
        // the revisit's own capture time, its payload from the seed's response
        expect(new Date(res.headers.get('memento-datetime')!).getTime()).toBe(Math.floor(Date.parse(revisit.header('WARC-Date')!) / 1000) * 1000);
        expect(await res.text()).toBe(CSS);
      } finally {
        wayback.child.kill();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('the ledger keeps which archive needs which', async () => {
    const [seed, ...later] = crawled;
    const edges = await h.tdb.db
      .selectFrom('archive_requires')
      .select(['archive_id', 'object_key', 'required_id'])
      .where(
        'archive_id',
        'in',
        crawled.map((c) => c.id),
      )
      .orderBy('archive_id')
      .execute();
    expect(edges).toEqual(
      later.map((c) => ({ archive_id: c.id, object_key: seed!.key, required_id: seed!.id })).sort((a, b) => a.archive_id.localeCompare(b.archive_id)),
    );
  });

  it('every page replays styled in the project replay, from the signed sources the API handed out', async () => {
    const [seed] = crawled;
    for (const c of crawled) {
      const signed = await sign(c.id);
      expect(signed.status).toBe(200);
      expect(signed.body.withheld).toBeUndefined();
      if (c === seed) expect(signed.body.requires).toBeUndefined();
      else expect(signed.body.requires?.map((r) => [r.id, r.objectKey])).toEqual([[seed!.id, seed!.key]]);
      // each URL is of the version its capture wrote, the required seed's too
      expect(c.version).not.toBeNull();
      expect(new URL(signed.body.url).searchParams.get('versionId')).toBe(c.version);
      for (const r of signed.body.requires ?? []) expect(new URL(r.url).searchParams.get('versionId')).toBe(seed!.version);
      const tab = await viewer.newPage();
      const outside: string[] = [];
      tab.on('request', (r) => {
        if (!r.url().startsWith(replayUrl) && !r.url().startsWith('data:') && !r.url().startsWith('blob:')) outside.push(r.url());
      });
      try {
        await tab.goto(`${replayLink(replayUrl, c.key, signed.body.url, signed.body.requires)}#view=pages&url=${encodeURIComponent(c.url)}`);
        // the page is done once the shared script has built its element (null is "not yet"), the
        // stylesheet has coloured it and its font has loaded
        const styled = { bg: 'rgb(1, 2, 3)', built: 'built by the shared script', font: true };
        let seen: { bg: string; built: string | null; font: boolean } | undefined;
        const until = Date.now() + 60_000;
        while (Date.now() < until) {
          const frame = tab.frames().find((f) => f.url().includes('mp_/') && f.url().includes(c.url));
          seen = frame
            ? await frame
                .evaluate(async () => ({
                  bg: getComputedStyle(document.body).backgroundColor,
                  built: document.getElementById('built')?.textContent ?? null,
                  font: (await document.fonts.ready, document.fonts.check('12px TestMono')),
                }))
                .catch(() => undefined)
            : undefined;
          if (isDeepStrictEqual(seen, styled)) break;
          await tab.waitForTimeout(250);
        }
        expect(seen, c.url).toEqual(styled);
        // the browser asked replay only: nothing from the site, nothing from the bucket directly
        expect(outside).toEqual([]);
      } finally {
        await tab.close();
      }
    }
  });

  it('deleting the archive the others require is refused with 409 naming them; a dependent can go first, then the last one lets it go', async () => {
    const [seed, ...later] = crawled;
    const del = async (id: string) => {
      const res = await fetch(`${h.api.url}/api/archives/${id}`, { method: 'DELETE', headers: await as('alice', [ORG]) });
      return { status: res.status, body: (await res.json()) as Record<string, unknown> };
    };
    const refused = await del(seed!.id);
    expect(refused.status).toBe(409);
    expect((refused.body.requiredBy as { id: string }[]).map((a) => a.id).sort()).toEqual(later.map((c) => c.id).sort());
    for (const c of later) expect(refused.body.error).toContain(c.id);
    expect(await h.tdb.db.selectFrom('archives').select('id').where('id', '=', seed!.id).executeTakeFirst()).toBeDefined();

    // a member of the organization may look but not delete
    const member = await fetch(`${h.api.url}/api/archives/${later[0]!.id}`, { method: 'DELETE', headers: await as('carol', [ORG]) });
    expect(member.status).toBe(403);
    const stranger = await fetch(`${h.api.url}/api/archives/${later[0]!.id}`, { method: 'DELETE', headers: await as('mallory', ['other']) });
    expect(stranger.status).toBe(404);

    for (const c of later.slice(0, -1)) expect(await del(c.id)).toEqual({ status: 200, body: { id: c.id, deleted: true, objectDeleted: true } });
    const still = await del(seed!.id);
    expect(still.status).toBe(409);
    expect((still.body.requiredBy as { id: string }[]).map((a) => a.id)).toEqual([later.at(-1)!.id]);
    expect((await del(later.at(-1)!.id)).status).toBe(200);
    expect(await del(seed!.id)).toEqual({ status: 200, body: { id: seed!.id, deleted: true, objectDeleted: true } });
    expect(
      await h.tdb.db
        .selectFrom('archives')
        .select('id')
        .where(
          'id',
          'in',
          crawled.map((c) => c.id),
        )
        .execute(),
    ).toEqual([]);
    expect((await sign(seed!.id)).status).toBe(404);
  });
});
