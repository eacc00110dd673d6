// Issue 29, item 5, over the real stack and Chromium: a crawl of a site where two pages' script
// makes 60 MiB of text. The capture keeps the first MAX_PAGE_TEXT_BYTES of it and says so in the
// manifest (truncated.text, kept in the archive's provenance); the crawl workflow indexes all five
// pages; the ordinary ones are found by their words, the two by their first words but not by a
// word past the cap.
import { randomBytes } from 'node:crypto';
import { afterAll, expect, it } from 'vitest';
import { MAX_PAGE_TEXT_BYTES } from '../../src/domain/page-text.ts';
import { createSearchIndex } from '../../src/search/client.ts';
import { readArchivePages } from '../../src/search/indexer.ts';
import { eventually, waitForCrawlEnd } from '../support/crawls.ts';
import { drain } from '../support/ledger.ts';
import { useLiveCrawlStack } from '../support/live-crawl.ts';

const ORG = 'capped';
const OPENSEARCH_URL = 'http://127.0.0.1:9200';
const INDEX = `cl-test-search-cap-${randomBytes(4).toString('hex')}`;
const HUGE_TEXT = 60 * 1024 * 1024;

// a few bytes of script make 60 MiB of innerText: "bilby" first, "quoll" last
const huge = (n: number): string =>
  `<title>Huge ${n}</title><body><p>bilby</p><pre id="t"></pre><script>document.getElementById('t').textContent = 'okapi '.repeat(${HUGE_TEXT / 6}) + ' quoll';</script></body>`;

const live = useLiveCrawlStack({
  org: ORG,
  flow: { log: (line) => process.env.CAPTURE_LEDGER_TEST_LOG && console.log(`${new Date().toISOString()} flow ${line.slice(0, 300)}`) },
  env: { CAPTURE_LEDGER_LEVEL_TIMEOUT_SECONDS: '240', CAPTURE_LEDGER_OPENSEARCH_URL: OPENSEARCH_URL, CAPTURE_LEDGER_OPENSEARCH_INDEX: INDEX },
  hosts: {
    site: {
      pages: {
        '/': '<title>Home</title><p>a wombat lives here</p><a href="/huge1">1</a><a href="/huge2">2</a><a href="/dugong">d</a><a href="/kowari">k</a>',
        '/huge1': huge(1),
        '/huge2': huge(2),
        '/dugong': '<title>Dugong</title><p>a dugong grazes</p>',
        '/kowari': '<title>Kowari</title><p>a kowari hunts</p>',
      },
    },
  },
});

afterAll(async () => {
  const search = createSearchIndex({ url: OPENSEARCH_URL, index: INDEX });
  await search.client.indices.delete({ index: INDEX }, { ignore: [404] });
  await search.client.close();
});

async function hitsFor(q: string): Promise<{ hits: { archiveId: string; url: string }[]; total: number }> {
  const res = await fetch(`${live.api.url}/api/search?q=${q}`, { headers: await live.as('alice', [ORG]) });
  expect(res.status).toBe(200);
  return (await res.json()) as never;
}

it('two pages of 60 MiB of text are captured cut to the cap, noted, and indexed with the rest', { timeout: 420_000 }, async () => {
  const res = await fetch(`${live.api.url}/api/crawls`, {
    method: 'POST',
    headers: await live.as('alice', [ORG]),
    body: JSON.stringify({ seeds: [live.site.url('site', '/')], maxDepth: 1, perHostDelayMs: 0, rules: [{ follow: 'same-origin' }] }),
  });
  expect(res.status, await res.clone().text()).toBe(202);
  const { crawlId } = (await res.json()) as { crawlId: string };
  const row = await waitForCrawlEnd(live.tdb.db, crawlId, 380_000);
  expect(row).toMatchObject({ state: 'succeeded', failure: null });

  const archives = await eventually(
    async () => {
      const rows = await live.tdb.db.selectFrom('archives').select(['id', 'url', 'bucket', 'object_key', 'provenance', 'indexed_at', 'index_error']).execute();
      return rows.length === 5 && rows.every((r) => r.indexed_at !== null) ? rows : undefined;
    },
    30_000,
    'five archives indexed by the workflow',
  );
  const byPath = new Map(archives.map((a) => [new URL(a.url).pathname, a]));
  for (const path of ['/huge1', '/huge2']) {
    const a = byPath.get(path)!;
    // the manifest's note, as admission kept it: the UTF-8 length innerText had
    const note = a.provenance.truncated as { text: number };
    expect(Object.keys(note)).toEqual(['text']);
    expect(note.text).toBeGreaterThan(HUGE_TEXT);
    expect(note.text).toBeLessThan(HUGE_TEXT + 20);
    expect(a.index_error).toBeNull();
    const [page] = (await readArchivePages(live.s3, a.bucket, a.object_key)).pages;
    expect(Buffer.byteLength(page!.text!)).toBe(MAX_PAGE_TEXT_BYTES);
    expect(page!.text!).toMatch(/^bilby\s+okapi okapi /);
  }
  for (const path of ['/', '/dugong', '/kowari']) expect(byPath.get(path)!.provenance).not.toHaveProperty('truncated');

  await drain(live.tdb.db, live.store.client);
  for (const [word, path] of [
    ['wombat', '/'],
    ['dugong', '/dugong'],
    ['kowari', '/kowari'],
  ] as const) {
    expect(
      (await hitsFor(word)).hits.map((h) => h.archiveId),
      word,
    ).toEqual([byPath.get(path)!.id]);
  }
  const first = await hitsFor('bilby');
  expect(first.hits.map((h) => new URL(h.url).pathname).sort()).toEqual(['/huge1', '/huge2']);
  expect(await hitsFor('quoll')).toEqual({ hits: [], total: 0 });
});
