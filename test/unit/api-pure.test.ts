import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { validationDetails } from '../../src/api/error-handler.ts';
import { pickerView, replayLink } from '../../src/api/picker.ts';
import { UUID_PATTERN } from '../../src/api/schemas.ts';
import { grantDuration, parseShareDuration, shareSubject, ShareUsageError } from '../../src/cli/fga-share.ts';
import { fillPage, type ArchiveCursor } from '../../src/store/archives.ts';

interface Row {
  id: string;
  captured_at: Date;
}

/** An in-memory candidate source in (captured_at desc, id desc) order, honouring the cursor. */
function source(rows: Row[]) {
  const sorted = [...rows].sort((a, b) => b.captured_at.getTime() - a.captured_at.getTime() || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0));
  const reads: number[] = [];
  const fetchChunk = async (after: ArchiveCursor | undefined, size: number): Promise<Row[]> => {
    reads.push(size);
    const rest = sorted.filter((r) => {
      if (after === undefined) return true;
      const t = r.captured_at.getTime();
      const at = after.capturedAt.getTime();
      if (after.id === undefined) return t < at;
      return t < at || (t === at && r.id < after.id);
    });
    return rest.slice(0, size);
  };
  return { sorted, fetchChunk, reads };
}

describe('fillPage', () => {
  it('fills the page even when most candidates are filtered out', async () => {
    const rows = Array.from({ length: 1000 }, (_, i) => ({ id: `id-${String(i).padStart(4, '0')}`, captured_at: new Date(1_000_000 - i * 1000) }));
    const src = source(rows);
    const allowed = new Set(rows.filter((_, i) => i % 37 === 0).map((r) => r.id));
    const batches: number[] = [];
    const r = await fillPage(src.fetchChunk, async (chunk) => {
      batches.push(chunk.length);
      return new Set(chunk.filter((c) => allowed.has(c.id)).map((c) => c.id));
    }, { limit: 20 });
    expect(r.rows.map((x) => x.id)).toEqual(src.sorted.filter((x) => allowed.has(x.id)).slice(0, 20).map((x) => x.id));
    expect(batches.length).toBe(r.chunks); // one filter call per chunk
    expect(r.chunks).toBeLessThan(6);
  });

  it('returns fewer rows only when the candidates run out', async () => {
    const rows = Array.from({ length: 30 }, (_, i) => ({ id: `r${i}`, captured_at: new Date(i * 10) }));
    const src = source(rows);
    const r = await fillPage(src.fetchChunk, async () => new Set(['r3', 'r7']), { limit: 50, firstChunk: 4 });
    expect(r.rows.map((x) => x.id)).toEqual(['r7', 'r3']);
    expect(r.candidatesRead).toBe(30);
  });

  it('property: the page is exactly the first `limit` allowed rows, newest first, none twice, before the cursor', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.record({ t: fc.integer({ min: 0, max: 40 }), allowed: fc.boolean() }), { maxLength: 120 }),
        fc.integer({ min: 1, max: 25 }),
        fc.integer({ min: 1, max: 30 }),
        fc.option(fc.integer({ min: 0, max: 41 }), { nil: undefined }),
        async (spec, limit, firstChunk, before) => {
          // many rows share a timestamp: the id tie-break must neither skip nor repeat them
          const rows = spec.map((s, i) => ({ id: `id-${String(i).padStart(3, '0')}`, captured_at: new Date(s.t * 1000), allowed: s.allowed }));
          const src = source(rows);
          const allowed = new Set(rows.filter((r) => r.allowed).map((r) => r.id));
          const r = await fillPage(src.fetchChunk, async (chunk) => new Set(chunk.filter((c) => allowed.has(c.id)).map((c) => c.id)), {
            limit,
            firstChunk,
            maxChunk: 40,
            before: before === undefined ? undefined : new Date(before * 1000),
          });
          const expected = src.sorted
            .filter((x) => allowed.has(x.id) && (before === undefined || x.captured_at.getTime() < before * 1000))
            .slice(0, limit)
            .map((x) => x.id);
          expect(r.rows.map((x) => x.id)).toEqual(expected);
        },
      ),
      { numRuns: 300 },
    );
  });
});

describe('validationDetails', () => {
  it('names the field for type, required and additionalProperties errors', () => {
    expect(
      validationDetails(
        [
          { keyword: 'type', instancePath: '/maxDepth', schemaPath: '', params: { type: 'integer' }, message: 'must be integer' },
          { keyword: 'required', instancePath: '', schemaPath: '', params: { missingProperty: 'seeds' }, message: "must have required property 'seeds'" },
          { keyword: 'additionalProperties', instancePath: '/rules/0', schemaPath: '', params: { additionalProperty: 'extra' }, message: 'must NOT have additional properties' },
          { keyword: 'format', instancePath: '/a~1b', schemaPath: '', params: { format: 'uuid' }, message: 'must match format "uuid"' },
        ],
        'body',
      ),
    ).toEqual([
      { field: 'body.maxDepth', message: 'must be integer' },
      { field: 'body.seeds', message: 'is required' },
      { field: 'body.rules.0.extra', message: 'is not allowed' },
      { field: 'body.a/b', message: 'must be a UUID' },
    ]);
    expect(validationDetails([{ keyword: 'pattern', instancePath: '/id', schemaPath: '', params: { pattern: UUID_PATTERN }, message: 'must match pattern' }], 'params')).toEqual([{ field: 'params.id', message: 'must be a UUID' }]);
    expect(validationDetails([{ keyword: 'format', instancePath: '/before', schemaPath: '', params: { format: 'date-time' }, message: 'x' }], 'querystring')[0]!.message).toContain('ISO 8601');
  });
});

describe('picker', () => {
  it('links replay with the object key, path segments encoded', () => {
    expect(replayLink('http://127.0.0.1:8899', 'crawls/abc/page.wacz')).toBe('http://127.0.0.1:8899/?source=/wacz/crawls/abc/page.wacz');
    expect(replayLink('http://127.0.0.1:8899/', 'a b/c&d+e.wacz')).toBe('http://127.0.0.1:8899/?source=/wacz/a%20b/c%26d%2Be.wacz');
  });
  it('asks for names under dev, a token under oidc, and only shows a notice under none', () => {
    const dev = pickerView('dev', { replayUrl: 'http://r' });
    expect(dev).toContain('id="subject"');
    expect(dev).toContain('id="organizations"');
    expect(dev).not.toContain('id="token"');
    const oidc = pickerView('oidc', { replayUrl: 'http://r' });
    expect(oidc).toContain('id="token"');
    expect(oidc).not.toContain('id="subject"');
    const none = pickerView('none', { replayUrl: 'http://r' });
    expect(none).toContain('id="notice"');
    expect(none).not.toMatch(/<form|<script|id="token"|id="subject"/);
  });
  it('escapes the replay URL into the page', () => {
    expect(pickerView('dev', { replayUrl: 'http://r/"><script>' })).not.toContain('"><script>');
  });
});

describe('fga:share arguments', () => {
  it.each([
    ['30s', 30],
    ['15m', 900],
    ['2h', 7200],
    ['7d', 604_800],
    ['366d', 366 * 86_400],
  ])('%s is %i seconds', (text, seconds) => {
    expect(parseShareDuration(text)).toBe(seconds);
    expect(grantDuration(seconds)).toBe(`${seconds}s`);
  });
  it.each(['', '0s', '10', '1w', '-5m', '1.5h', '367d', '1h30m', ' s'])('refuses %j', (text) => {
    expect(() => parseShareDuration(text)).toThrow(ShareUsageError);
  });
  it('takes a bare name or user:name and refuses others', () => {
    expect(shareSubject('bob')).toBe('bob');
    expect(shareSubject('user:bob')).toBe('bob');
    expect(() => shareSubject('organization:acme')).toThrow(ShareUsageError);
    expect(() => shareSubject('bo b')).toThrow(ShareUsageError);
    expect(() => shareSubject('a#member')).toThrow(ShareUsageError);
  });
});
