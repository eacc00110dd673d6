// The reads a search makes within a caller's reach: the filter built from what OpenFGA lists,
// the first read that carries the page's fields, and the raw count asked beside it.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { buildCountQuery, buildFirstPageQuery, buildQuery, HIT_FIELDS, indexHitOf, matchQuery, reachFilter } from '../../src/search/query.ts';

type Doc = { archiveId: string; crawlId?: string };
type Clause = Record<string, unknown>;

/** The subset of the query language reachFilter writes (bool should/must_not, terms, exists), evaluated on one document. */
function admits(clause: Clause, doc: Doc): boolean {
  if ('bool' in clause) {
    const b = clause.bool as { should?: Clause[]; must_not?: Clause[]; minimum_should_match?: number };
    const notOk = (b.must_not ?? []).some((c) => admits(c, doc));
    const should = b.should ?? [];
    const hits = should.filter((c) => admits(c, doc)).length;
    return !notOk && hits >= (b.minimum_should_match ?? (should.length > 0 ? 1 : 0));
  }
  if ('terms' in clause) {
    const [[field, values]] = Object.entries(clause.terms as Record<string, string[]>) as [[keyof Doc, string[]]];
    const v = doc[field];
    return v !== undefined && values.includes(v);
  }
  if ('exists' in clause) return (doc as Record<string, unknown>)[(clause.exists as { field: string }).field] !== undefined;
  throw new Error(`unexpected clause ${JSON.stringify(clause)}`);
}

const id: fc.Arbitrary<string> = fc.constantFrom('a', 'b', 'c', 'd', 'e');

describe('reachFilter', () => {
  it("admits exactly the pages of the caller's crawls, the archives shared with them, and pages the index knows no crawl of", () => {
    fc.assert(
      fc.property(
        fc.record({ jobs: fc.uniqueArray(id), shared: fc.uniqueArray(id) }),
        fc.record({ archiveId: id, crawlId: fc.option(id, { nil: undefined }) }),
        (reach, raw) => {
          const doc: Doc = raw.crawlId === undefined ? { archiveId: raw.archiveId } : { archiveId: raw.archiveId, crawlId: raw.crawlId };
          const expected = doc.crawlId === undefined || reach.jobs.includes(doc.crawlId) || reach.shared.includes(doc.archiveId);
          expect(admits(reachFilter(reach), doc)).toBe(expected);
        },
      ),
    );
  });

  it('names each crawl and share once, as listed', () => {
    expect(reachFilter({ jobs: ['j1', 'j2'], shared: ['s1'] })).toEqual({
      bool: {
        should: [{ bool: { must_not: [{ exists: { field: 'crawlId' } }] } }, { terms: { crawlId: ['j1', 'j2'] } }, { terms: { archiveId: ['s1'] } }],
        minimum_should_match: 1,
      },
    });
  });
});

describe('reads within a reach', () => {
  const filter = reachFilter({ jobs: ['j1'], shared: [] });

  it('narrows a ranking read with a filter clause, which leaves scores and order as the unfiltered read has them', () => {
    const q = buildQuery('okapi', { size: 50, from: 0, searchAfter: [2, 'a', 0], trackTotal: false, filter });
    expect(q.query).toEqual({ bool: { must: [matchQuery('okapi')], filter: [filter] } });
    expect(q).toMatchObject({ _source: false, search_after: [2, 'a', 0], size: 50, track_total_hits: false });
    expect(buildQuery('okapi', { size: 50, from: 0 }).query).toEqual(matchQuery('okapi'));
  });

  it('the first read: filtered hits with fields and snippets; the raw count asked beside it, unfiltered', () => {
    const q = buildFirstPageQuery('東京', { size: 21, from: 40, filter });
    expect(q).toEqual({
      query: { bool: { must: [matchQuery('東京')], filter: [filter] } },
      ...HIT_FIELDS,
      sort: [{ _score: 'desc' }, { archiveId: 'asc' }, { position: 'asc' }],
      track_total_hits: false,
      size: 21,
      from: 40,
    });
    expect(buildCountQuery('東京')).toEqual({ query: matchQuery('東京'), size: 0, track_total_hits: true });
  });
});

describe('indexHitOf', () => {
  const m = { archiveId: 'a', score: 1.5 };
  it('shows the stored fields and the snippet', () => {
    const raw = { _source: { archiveId: 'a', url: 'https://a/', capturedAt: '2024-05-01T00:00:00Z', title: 'T', ts: 't' }, highlight: { text: ['…x…'] } };
    expect(indexHitOf(m, raw)).toEqual({
      archiveId: 'a',
      url: 'https://a/',
      capturedAt: '2024-05-01T00:00:00Z',
      title: 'T',
      ts: 't',
      score: 1.5,
      snippet: '…x…',
    });
  });
  it('shows nothing of a source that is not whole or names another archive', () => {
    expect(indexHitOf(m, undefined)).toBeUndefined();
    expect(indexHitOf(m, { _source: { archiveId: 'b', url: 'https://a/', capturedAt: 'x' } })).toBeUndefined();
    expect(indexHitOf(m, { _source: { archiveId: 'a', capturedAt: 'x' } })).toBeUndefined();
  });
});
