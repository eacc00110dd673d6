// Issue 31 item 1, over the real stack and Chromium: a page that loads as it is scrolled. 24
// lazy images spaced down its length (every other one loading="lazy", the rest swapped in by an
// IntersectionObserver from data-src) and a feed that fetches three more pages of items when a
// sentinel at its end comes into view. Crawled through the API, the crawl workflow and the flow's
// capture worker: with the behaviors every image and feed page is a response record in the WACZ
// and the feed's items are in pages.jsonl's text; with behaviorsSeconds 0 (the control) they are not.
import { createServer, type AddressInfo } from 'node:net';
import { GetObjectCommand } from '@aws-sdk/client-s3';
import { describe, expect, it } from 'vitest';
import { readWacz, waczProblems, type WaczContents } from '../../src/domain/wacz/read.ts';
import { waitForCrawlEnd } from '../support/crawls.ts';
import { useLiveCrawlStack } from '../support/live-crawl.ts';
import { pngImage } from '../support/site.ts';

const ORG = 'scrolling';
const IMAGES = 24;
const FEED_PAGES = 3;
const ITEMS_PER_FEED_PAGE = 4;

const imagePath = (i: number): string => `/img/${i}.png`;
const feedPath = (n: number): string => `/feed?page=${n}`;

function scrollPage(): string {
  const images = Array.from({ length: IMAGES }, (_, k) => {
    const i = k + 1;
    return i % 2 === 1 ? `<img loading="lazy" src="${imagePath(i)}" alt="picture ${i}">` : `<img class="io" data-src="${imagePath(i)}" alt="picture ${i}">`;
  }).join('\n');
  return `<!doctype html><title>A long page</title>
<style>img { display: block; width: 200px; height: 120px; margin: 0 0 130px; background: #eee }</style>
<h1>Pictures down the page</h1>
${images}
<ol id="feed"></ol>
<div id="sentinel">loading more…</div>
<script>
  const swap = new IntersectionObserver((entries) => {
    for (const e of entries) if (e.isIntersecting) { e.target.src = e.target.dataset.src; swap.unobserve(e.target); }
  });
  document.querySelectorAll('img.io').forEach((img) => swap.observe(img));
  let next = 1, busy = false;
  const more = new IntersectionObserver(async (entries) => {
    if (!entries.some((e) => e.isIntersecting) || busy || next > ${FEED_PAGES}) return;
    busy = true;
    const items = await (await fetch('/feed?page=' + next++)).json();
    for (const text of items) document.getElementById('feed').insertAdjacentHTML('beforeend', '<li style="height: 80px">' + text + '</li>');
    if (next > ${FEED_PAGES}) document.getElementById('sentinel').remove();
    busy = false;
  }, { rootMargin: '0px 0px 400px 0px' });
  more.observe(document.getElementById('sentinel'));
</script>`;
}

const feedItem = (page: number, item: number): string => `Feed item ${page}.${item}`;

const s = useLiveCrawlStack({
  org: ORG,
  env: { CAPTURE_LEDGER_LEVEL_TIMEOUT_SECONDS: '180', CAPTURE_LEDGER_CAPTURE_FORMATS: 'wacz' },
  hosts: {
    site: {
      pages: {
        '/': scrollPage(),
        ...Object.fromEntries(
          Array.from({ length: IMAGES }, (_, k) => [imagePath(k + 1), { body: pngImage(200, 120, [10 * k, 80, 160]), contentType: 'image/png' }]),
        ),
        ...Object.fromEntries(
          Array.from({ length: FEED_PAGES }, (_, k) => [
            feedPath(k + 1),
            { body: JSON.stringify(Array.from({ length: ITEMS_PER_FEED_PAGE }, (_, j) => feedItem(k + 1, j + 1))), contentType: 'application/json' },
          ]),
        ),
      },
    },
  },
});

/** Crawls the page alone and reads its WACZ back from the object store. */
async function crawlScrollPage(settings: Record<string, unknown>, path = '/'): Promise<WaczContents> {
  const res = await fetch(`${s.api.url}/api/crawls`, {
    method: 'POST',
    headers: await s.as('alice', [ORG]),
    body: JSON.stringify({ seeds: [s.site.url('site', path)], maxDepth: 0, perHostDelayMs: 0, ...settings }),
  });
  expect(res.status, await res.clone().text()).toBe(202);
  const { crawlId } = (await res.json()) as { crawlId: string };
  expect(await waitForCrawlEnd(s.tdb.db, crawlId, 170_000)).toMatchObject({ state: 'succeeded', failure: null });
  const archive = await s.tdb.db
    .selectFrom('archives')
    .innerJoin('crawl_pages', 'crawl_pages.task_id', 'archives.task_id')
    .select(['archives.bucket', 'archives.object_key', 'archives.provenance'])
    .where('crawl_pages.crawl_id', '=', crawlId)
    .executeTakeFirstOrThrow();
  const obj = await s.s3.send(new GetObjectCommand({ Bucket: archive.bucket, Key: archive.object_key }));
  const w = await readWacz(Buffer.from(await obj.Body!.transformToByteArray()));
  expect(waczProblems(w)).toEqual([]);
  return w;
}

/** The response records' target URIs, as paths on the site. */
function responsePaths(w: WaczContents): Set<string> {
  const origin = new URL(s.site.url('site', '/')).origin;
  const uris = w.records.filter((r) => r.headers['WARC-Type'] === 'response').map((r) => new URL(r.headers['WARC-Target-URI']!));
  return new Set(uris.filter((u) => u.origin === origin).map((u) => u.pathname + u.search));
}

const count = (paths: Set<string>, of: (i: number) => string, n: number): number =>
  Array.from({ length: n }, (_, k) => of(k + 1)).filter((p) => paths.has(p)).length;

describe('a page that loads as it is scrolled', { timeout: 400_000 }, () => {
  it('with behaviors: all 24 images and all 3 feed pages are in the WACZ, and the feed’s items in the page text', async () => {
    const w = await crawlScrollPage({ behaviorsSeconds: 60 });
    const paths = responsePaths(w);
    expect(count(paths, imagePath, IMAGES)).toBe(IMAGES);
    expect(count(paths, feedPath, FEED_PAGES)).toBe(FEED_PAGES);
    const text = w.pages[0]!.text ?? '';
    for (let p = 1; p <= FEED_PAGES; p++) for (let i = 1; i <= ITEMS_PER_FEED_PAGE; i++) expect(text).toContain(feedItem(p, i));
    // the warcinfo says what ran, and for how long it might
    const info = w.records.find((r) => r.headers['WARC-Type'] === 'warcinfo')!.block.toString('utf8');
    expect(info).toMatch(/browsertrix-behaviors \d+\.\d+\.\d+/);
    expect(info).toContain('"seconds":60');
  });

  it('the control, behaviorsSeconds 0: fewer images, no feed page, none of the feed’s items', async () => {
    const w = await crawlScrollPage({ behaviorsSeconds: 0 });
    const paths = responsePaths(w);
    // the images near the top load without scrolling, the rest do not
    expect(count(paths, imagePath, IMAGES)).toBeGreaterThan(0);
    expect(count(paths, imagePath, IMAGES)).toBeLessThan(IMAGES);
    expect(paths.has('/')).toBe(true);
    expect(count(paths, feedPath, FEED_PAGES)).toBe(0);
    expect(w.pages[0]!.text ?? '').not.toContain('Feed item');
  });
});

describe('what the behaviors fetch goes through the address policy', { timeout: 200_000 }, () => {
  it('a lazy image and a data- URL on a refused address are never connected to', async () => {
    let connections = 0;
    const listener = createServer((sock) => {
      connections++;
      sock.destroy();
    });
    await new Promise<void>((r) => listener.listen(0, '127.0.0.1', () => r()));
    const refused = `http://127.0.0.1:${(listener.address() as AddressInfo).port}`;
    try {
      // autofetch fetches data-src and any data- attribute holding a URL; 127.0.0.1 is outside the policy
      s.site.setPage(
        'site',
        '/escape',
        `<title>escape</title><img loading="lazy" src="/img/1.png"><img data-src="${refused}/lazy.png"><div data-more="${refused}/more.json" style="height: 3000px"></div>`,
      );
      const w = await crawlScrollPage({ behaviorsSeconds: 10 }, '/escape');
      expect(responsePaths(w).has('/img/1.png')).toBe(true);
      expect(w.records.some((r) => (r.headers['WARC-Target-URI'] ?? '').startsWith(refused))).toBe(false);
      expect(connections).toBe(0);
    } finally {
      await new Promise<void>((r) => listener.close(() => r()));
    }
  });
});

describe('POST /api/crawls: behaviorsSeconds and siteBehaviors', () => {
  const post = async (body: unknown): Promise<{ status: number; body: { error?: string; details?: { field: string; message: string }[] } }> => {
    const res = await fetch(`${s.api.url}/api/crawls`, { method: 'POST', headers: await s.as('alice', [ORG]), body: JSON.stringify(body) });
    return { status: res.status, body: (await res.json()) as never };
  };

  it('a negative, fractional, too large or non-number budget is 400 naming behaviorsSeconds', async () => {
    for (const behaviorsSeconds of [-1, 1.5, 121, '10', null]) {
      const r = await post({ seeds: [s.site.url('site', '/')], behaviorsSeconds });
      expect(r.status, JSON.stringify(behaviorsSeconds)).toBe(400);
      expect(r.body.error).toBe('invalid request');
      expect(r.body.details!.map((d) => d.field)).toEqual(['body.behaviorsSeconds']);
    }
    const r = await post({ seeds: [s.site.url('site', '/')], siteBehaviors: 'no' });
    expect(r.status).toBe(400);
    expect(r.body.details!.map((d) => d.field)).toEqual(['body.siteBehaviors']);
  });

  it('the OpenAPI document states both, with the bounds the API applies', async () => {
    const doc = (await (await fetch(`${s.api.url}/api/openapi.json`)).json()) as {
      paths: Record<string, Record<string, { requestBody: { content: Record<string, { schema: { properties: Record<string, Record<string, unknown>> } }> } }>>;
    };
    const props = doc.paths['/api/crawls']!.post!.requestBody.content['application/json']!.schema.properties;
    expect(props.behaviorsSeconds).toMatchObject({ type: 'integer', minimum: 0, maximum: 120 });
    expect(props.siteBehaviors).toMatchObject({ type: 'boolean' });
  });
});
