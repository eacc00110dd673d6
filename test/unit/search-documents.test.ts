import { describe, expect, it } from 'vitest';
import { MAX_PAGE_TEXT_BYTES, MAX_PAGE_TITLE_BYTES } from '../../src/domain/page-text.ts';
import { parsePagesJsonl, formatPagesJsonl } from '../../src/domain/pages-jsonl.ts';
import { pageDocuments } from '../../src/search/indexer.ts';
import { buildFetchQuery, buildQuery } from '../../src/search/query.ts';
import { documentId, INDEX_MAPPINGS } from '../../src/search/schema.ts';
import { withheldFromProvenance } from '../../src/search/types.ts';

const archive = (provenance: Record<string, unknown> = {}, crawlId: string | null = null) => ({
  id: '11111111-1111-4111-8111-111111111111',
  provenance,
  captured_at: new Date('2024-05-01T12:00:00.000Z'),
  crawl_id: crawlId,
});

describe('pageDocuments', () => {
  it('makes one document per page line, title and text as written', () => {
    const parsed = parsePagesJsonl(formatPagesJsonl([{ url: 'https://a/', title: ' A ', text: 'x\ny', ts: '2024-05-01T11:59:00Z' }, { url: 'https://b/' }]));
    expect(pageDocuments(archive(), parsed)).toEqual([
      {
        archiveId: archive().id,
        position: 0,
        url: 'https://a/',
        title: ' A ',
        text: 'x\ny',
        ts: '2024-05-01T11:59:00Z',
        capturedAt: '2024-05-01T12:00:00.000Z',
      },
      { archiveId: archive().id, position: 1, url: 'https://b/', capturedAt: '2024-05-01T12:00:00.000Z' },
    ]);
  });

  it('carries the crawl the archive was reported for on every page, and no crawlId when the ledger has none', () => {
    const parsed = parsePagesJsonl(formatPagesJsonl([{ url: 'https://a/' }, { url: 'https://b/' }]));
    const crawl = '22222222-2222-4222-8222-222222222222';
    expect(pageDocuments(archive({}, crawl), parsed).map((d) => d.crawlId)).toEqual([crawl, crawl]);
    expect(pageDocuments(archive(), parsed).some((d) => 'crawlId' in d)).toBe(false);
  });

  it("carries textWithheld from provenance, and the page line's own first", () => {
    const parsed = parsePagesJsonl(
      formatPagesJsonl([
        { url: 'https://a/', text: '' },
        { url: 'https://b/', text: '', textWithheld: 'deny' },
      ]),
    );
    const docs = pageDocuments(archive({ documentWithheld: 'url-policy' }), parsed);
    expect(docs.map((d) => d.textWithheld)).toEqual(['url-policy', 'deny']);
    const plain = pageDocuments(archive({ software: 'x' }), parsed);
    expect(plain.map((d) => d.textWithheld)).toEqual([undefined, 'deny']);
    expect('textWithheld' in plain[0]!).toBe(false);
    expect(plain[0]!.text).toBe('');
  });
});

describe('withheldFromProvenance', () => {
  it('keeps any non-empty reason, even one this code does not know', () => {
    expect(withheldFromProvenance({ documentWithheld: 'no-archive' })).toBe('no-archive');
    expect(withheldFromProvenance({ documentWithheld: 'some-future-reason' })).toBe('some-future-reason');
    expect(withheldFromProvenance({ documentWithheld: '' })).toBeUndefined();
    expect(withheldFromProvenance({ documentWithheld: 3 })).toBeUndefined();
    expect(withheldFromProvenance({})).toBeUndefined();
    expect(withheldFromProvenance(null)).toBeUndefined();
  });
});

describe('the index shape', () => {
  it('analyses title and text with the built-in cjk analyzer and stores nothing about permissions (crawlId says where an archive came from)', () => {
    expect(INDEX_MAPPINGS.properties.title).toEqual({ type: 'text', analyzer: 'cjk' });
    expect(INDEX_MAPPINGS.properties.text).toEqual({ type: 'text', analyzer: 'cjk' });
    expect(Object.keys(INDEX_MAPPINGS.properties).sort()).toEqual([
      'archiveId',
      'capturedAt',
      'crawlId',
      'position',
      'text',
      'textWithheld',
      'title',
      'ts',
      'url',
    ]);
    expect(INDEX_MAPPINGS.dynamic).toBe('strict');
  });

  it('ids documents by archive and position, so re-indexing overwrites', () => {
    expect(documentId('a', 0)).toBe('a:0');
    expect(documentId('a', 12)).toBe('a:12');
  });

  it('queries title and text, every term required, with an exact total', () => {
    const q = buildQuery('東京タワー', { size: 20, from: 40 });
    expect(q).toMatchObject({
      query: { multi_match: { query: '東京タワー', fields: ['title^2', 'text'], operator: 'and' } },
      track_total_hits: true,
      size: 20,
      from: 40,
    });
  });

  it('sorts in a total order (score, archive, position) and continues with search_after instead of from', () => {
    const first = buildQuery('x', { size: 40, from: 0 });
    expect(first.sort).toEqual([{ _score: 'desc' }, { archiveId: 'asc' }, { position: 'asc' }]);
    const later = buildQuery('x', { size: 80, from: 0, searchAfter: [1.5, 'a', 3], trackTotal: false });
    expect(later).toMatchObject({ search_after: [1.5, 'a', 3], size: 80, track_total_hits: false });
    expect(later).not.toHaveProperty('from');
  });

  it('ranks with ids only: no source and no highlight in a ranking read', () => {
    const q = buildQuery('x', { size: 200, from: 0 });
    expect(q._source).toBe(false);
    expect(q).not.toHaveProperty('highlight');
  });

  it("fetches a page's documents by id, under the same query so the snippets match it", () => {
    const q = buildFetchQuery('東京タワー', ['a:0', 'b:3']);
    expect(q).toEqual({
      query: { bool: { must: [buildQuery('東京タワー', { size: 1, from: 0 }).query], filter: [{ ids: { values: ['a:0', 'b:3'] } }] } },
      _source: ['archiveId', 'url', 'title', 'textWithheld', 'capturedAt', 'ts'],
      highlight: { pre_tags: [''], post_tags: [''], fields: { text: { fragment_size: 160, number_of_fragments: 1 } } },
      track_total_hits: false,
      size: 2,
    });
  });
});

describe('pageDocuments caps', () => {
  it('cuts text and title to the capture caps again: a WACZ may come from another capturer', () => {
    const parsed = parsePagesJsonl(
      formatPagesJsonl([{ url: 'https://a/', title: 't'.repeat(MAX_PAGE_TITLE_BYTES + 9), text: 'éa'.repeat(MAX_PAGE_TEXT_BYTES) }]),
    );
    const [doc] = pageDocuments(archive(), parsed);
    expect(doc!.title).toBe('t'.repeat(MAX_PAGE_TITLE_BYTES));
    expect(Buffer.byteLength(doc!.text!)).toBeLessThanOrEqual(MAX_PAGE_TEXT_BYTES);
    expect(Buffer.byteLength(doc!.text!)).toBeGreaterThan(MAX_PAGE_TEXT_BYTES - 3);
    expect('éa'.repeat(MAX_PAGE_TEXT_BYTES).startsWith(doc!.text!)).toBe(true);
  });
});
