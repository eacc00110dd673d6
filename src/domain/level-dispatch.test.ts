import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import type { Manifest, ManifestArtifact } from './contract.ts';
import { admitPage, checkPlacement, manifestKeyProblem, type ManifestRead } from './admission.ts';
import {
  artifactPlacementProblem,
  expectedManifestKey,
  hostsToRecord,
  isSafeTaskId,
  isUnderPrefix,
  MAX_RECORDED_DELAY_MS,
  misplacedManifests,
  prefixOfManifestKey,
} from './level-dispatch.ts';
import { levelPrefix } from './level.ts';

const PREFIX = 'captures/c1/0/';
const BUCKET = 'captures';

function artifact(over: Partial<ManifestArtifact> = {}): ManifestArtifact {
  return { format: 'wacz', bucket: BUCKET, key: `${PREFIX}t1.wacz`, sha256: 'a', size: 1, ...over };
}

function manifest(artifacts: ManifestArtifact[]): Manifest {
  return { taskId: 't1', url: 'https://a.test/', status: 'succeeded', artifacts };
}

/** a path segment a task id could be: letters, digits and the few safe punctuation marks */
const segment = fc.stringMatching(/^[A-Za-z0-9_-][A-Za-z0-9._-]{0,40}$/).filter((s) => s !== '.' && s !== '..');

describe('levelPrefix and expectedManifestKey', () => {
  it('is captures/<crawlId>/<depth>/ and <prefix><taskId>.result.json', () => {
    expect(levelPrefix('c1', 2)).toBe('captures/c1/2/');
    expect(expectedManifestKey('captures/c1/2/', 't9')).toBe('captures/c1/2/t9.result.json');
  });
});

describe('isSafeTaskId', () => {
  it('takes one plain path segment', () => {
    for (const ok of ['t1', '0b7e8f4a-1c2d-4e5f-8a9b-0c1d2e3f4a5b', 'a.b_c-d', '_x']) expect(isSafeTaskId(ok), ok).toBe(true);
  });
  it('refuses anything that could leave the prefix or is not one segment', () => {
    for (const bad of ['', '.', '..', '../x', 'a/b', '/a', '.hidden', 'a b', 'a%2fb', 'a\\b', 'é']) expect(isSafeTaskId(bad), bad).toBe(false);
  });
});

describe('isUnderPrefix', () => {
  it('takes keys below the prefix with plain segments', () => {
    expect(isUnderPrefix(`${PREFIX}t1.wacz`, PREFIX)).toBe(true);
    expect(isUnderPrefix(`${PREFIX}sub/t1.png`, PREFIX)).toBe(true);
  });
  it('refuses the prefix itself, siblings, empty and dot segments', () => {
    for (const bad of [
      PREFIX,
      'captures/c1/01/t1.wacz',
      'captures/c1/0t1.wacz',
      `${PREFIX}../1/t1.wacz`,
      `${PREFIX}./t1.wacz`,
      `${PREFIX}/t1.wacz`,
      `${PREFIX}a//b`,
      'other/t1.wacz',
    ]) {
      expect(isUnderPrefix(bad, PREFIX), bad).toBe(false);
    }
  });
  it('needs a prefix that ends with a slash', () => {
    expect(isUnderPrefix('captures/c1/0x', 'captures/c1/0')).toBe(false);
  });
  it('a key built from the prefix and a safe segment is always under it; a key with a dot-dot segment never is', () => {
    fc.assert(
      fc.property(segment, fc.array(segment, { maxLength: 3 }), (name, dirs) => {
        expect(isUnderPrefix(`${PREFIX}${[...dirs, name].join('/')}`, PREFIX)).toBe(true);
        expect(isUnderPrefix(`${PREFIX}${[...dirs, '..', name].join('/')}`, PREFIX)).toBe(false);
      }),
    );
  });
});

describe('misplacedManifests', () => {
  it('names every page whose key is not the expected one', () => {
    const pages = [
      { url: 'https://a.test/1', status: 'captured' as const, taskId: 't1', manifestKey: `${PREFIX}t1.result.json` },
      { url: 'https://a.test/2', status: 'captured' as const, taskId: 't2', manifestKey: 'captures/other/0/t2.result.json' },
      { url: 'https://a.test/3', status: 'captured' as const, taskId: 't3', manifestKey: `${PREFIX}t4.result.json` },
      { url: 'https://a.test/4', status: 'captured' as const, manifestKey: `${PREFIX}t5.result.json` },
      { url: 'https://a.test/5', status: 'captured' as const, taskId: '../x', manifestKey: `${PREFIX}../x.result.json` },
      { url: 'https://a.test/6', status: 'failed' as const, taskId: 't6', manifestError: 'lost' },
    ];
    expect(misplacedManifests(pages, PREFIX)).toEqual([
      { url: 'https://a.test/2', taskId: 't2', manifestKey: 'captures/other/0/t2.result.json', expected: `${PREFIX}t2.result.json` },
      { url: 'https://a.test/3', taskId: 't3', manifestKey: `${PREFIX}t4.result.json`, expected: `${PREFIX}t3.result.json` },
      { url: 'https://a.test/4', taskId: null, manifestKey: `${PREFIX}t5.result.json`, expected: null },
      { url: 'https://a.test/5', taskId: '../x', manifestKey: `${PREFIX}../x.result.json`, expected: null },
    ]);
  });
  it('accepts exactly the expected key for every safe task id, and nothing else', () => {
    fc.assert(
      fc.property(segment, fc.string({ maxLength: 60 }), (taskId, other) => {
        const good = { url: 'https://a.test/', status: 'captured' as const, taskId, manifestKey: expectedManifestKey(PREFIX, taskId) };
        expect(misplacedManifests([good], PREFIX)).toEqual([]);
        const key = other === good.manifestKey ? `${other}x` : other;
        expect(misplacedManifests([{ ...good, manifestKey: key }], PREFIX)).toHaveLength(1);
      }),
    );
  });
});

describe('prefixOfManifestKey', () => {
  it('is the key minus <taskId>.result.json', () => {
    expect(prefixOfManifestKey(`${PREFIX}t1.result.json`, 't1')).toBe(PREFIX);
    expect(prefixOfManifestKey('t1.result.json', 't1')).toBeNull();
    expect(prefixOfManifestKey(`${PREFIX}t2.result.json`, 't1')).toBeNull();
    expect(prefixOfManifestKey(`${PREFIX}x.result.json`, '../x')).toBeNull();
  });
});

describe('artifactPlacementProblem', () => {
  it('passes artifacts in the bucket under the prefix', () => {
    expect(
      artifactPlacementProblem(manifest([artifact(), artifact({ format: 'links', key: `${PREFIX}t1.links.json` })]), { bucket: BUCKET, prefix: PREFIX }),
    ).toBeNull();
    expect(artifactPlacementProblem(manifest([]), { bucket: BUCKET, prefix: PREFIX })).toBeNull();
  });
  it('names an artifact in another bucket or outside the prefix', () => {
    expect(artifactPlacementProblem(manifest([artifact(), artifact({ bucket: 'secrets' })]), { bucket: BUCKET, prefix: PREFIX })).toBe(
      `artifact "${PREFIX}t1.wacz" (wacz) is in bucket "secrets", not "captures"`,
    );
    expect(artifactPlacementProblem(manifest([artifact({ key: 'captures/c2/0/t1.wacz' })]), { bucket: BUCKET, prefix: PREFIX })).toBe(
      'artifact "captures/c2/0/t1.wacz" (wacz) is not under "captures/c1/0/"',
    );
  });
});

describe('checkPlacement and admitPage', () => {
  const at = { taskId: 't1', manifestKey: `${PREFIX}t1.result.json`, bucket: BUCKET };
  const ok = (m: Manifest): ManifestRead => ({ kind: 'ok', manifest: m });
  const reported = { url: 'https://a.test/', status: 'captured' as const, taskId: 't1', manifestKey: at.manifestKey, finishedAt: '2025-01-01T00:00:00.000Z' };

  it('lets a well-placed manifest through unchanged, with or without the dispatched prefix', () => {
    const read = ok(manifest([artifact()]));
    expect(checkPlacement(read, at)).toBe(read);
    expect(checkPlacement(read, { ...at, prefix: PREFIX })).toBe(read);
  });
  it('leaves reads that are not manifests alone', () => {
    for (const r of [{ kind: 'missing' }, { kind: 'absent' }, { kind: 'unreadable', error: 'x' }] as ManifestRead[]) expect(checkPlacement(r, at)).toBe(r);
  });
  it('refuses a foreign bucket, a foreign prefix, and a key that is not the dispatched one', () => {
    expect(checkPlacement(ok(manifest([artifact({ bucket: 'other' })])), at).kind).toBe('refused');
    expect(checkPlacement(ok(manifest([artifact({ key: 'captures/c9/0/t1.wacz' })])), at).kind).toBe('refused');
    expect(checkPlacement(ok(manifest([artifact()])), { ...at, prefix: 'captures/c1/1/' })).toEqual({
      kind: 'refused',
      error: `manifest key "${PREFIX}t1.result.json" is not "captures/c1/1/t1.result.json"`,
    });
    expect(manifestKeyProblem({ taskId: 't1', manifestKey: 'x.json' })).toBe('manifest key "x.json" is not <prefix><taskId>.result.json');
  });
  it('a refused manifest fails the page, registers nothing and reads no links, whatever was reported', () => {
    const refused = checkPlacement(ok(manifest([artifact({ bucket: 'other' }), artifact({ format: 'links', key: `${PREFIX}t1.links.json` })])), at);
    const a = admitPage(reported, refused, new Date('2025-01-02T00:00:00.000Z'));
    expect(a).toMatchObject({ state: 'failed', archive: null, links: null, notAdmitted: 'refused', corrected: true });
    expect(a.failure).toContain('bucket "other"');
  });
});

describe('hostsToRecord', () => {
  const now = new Date('2025-01-01T00:10:00.000Z');
  const level = new Set(['a.test', 'b.test:8080']);

  it('keeps the flow’s delay (never below perHostDelayMs) and the latest finish per host of the level', () => {
    const got = hostsToRecord(
      {
        hosts: [
          { host: 'a.test', delayMs: 5000, lastFinishedAt: '2025-01-01T00:00:05.000Z' },
          { host: 'b.test:8080', delayMs: 100 },
          { host: 'elsewhere.test', delayMs: 9000 },
        ],
        pages: [
          { url: 'http://a.test/x', finishedAt: '2025-01-01T00:00:09.000Z' },
          { url: 'http://b.test:8080/', finishedAt: '2025-01-01T00:00:01.000Z' },
          { url: 'http://elsewhere.test/', finishedAt: '2025-01-01T00:00:01.000Z' },
          { url: 'not a url', finishedAt: '2025-01-01T00:00:01.000Z' },
        ],
      },
      level,
      2000,
      now,
    );
    expect(got).toEqual([
      { host: 'a.test', delayMs: 5000, lastFinishedAt: new Date('2025-01-01T00:00:09.000Z') },
      { host: 'b.test:8080', delayMs: 2000, lastFinishedAt: new Date('2025-01-01T00:00:01.000Z') },
    ]);
  });
  it('ignores finishes in the future and caps the delay', () => {
    const got = hostsToRecord({ hosts: [{ host: 'a.test', delayMs: 1e12, lastFinishedAt: '2030-01-01T00:00:00.000Z' }], pages: [] }, level, 0, now);
    expect(got).toEqual([{ host: 'a.test', delayMs: MAX_RECORDED_DELAY_MS, lastFinishedAt: null }]);
  });
  it('a report without hosts still records the pages’ finishes at perHostDelayMs', () => {
    expect(hostsToRecord({ pages: [{ url: 'http://a.test/', finishedAt: '2025-01-01T00:00:00.000Z' }, { url: 'http://a.test/2' }] }, level, 300, now)).toEqual([
      { host: 'a.test', delayMs: 300, lastFinishedAt: new Date('2025-01-01T00:00:00.000Z') },
    ]);
  });
  it('never records a delay below perHostDelayMs nor a host the level did not touch', () => {
    fc.assert(
      fc.property(
        fc.array(fc.record({ host: fc.constantFrom('a.test', 'b.test:8080', 'c.test'), delayMs: fc.nat(10_000_000) })),
        fc.nat(100_000),
        (hosts, per) => {
          for (const r of hostsToRecord({ hosts, pages: [] }, level, per, now)) {
            expect(level.has(r.host)).toBe(true);
            expect(r.delayMs).toBeGreaterThanOrEqual(per);
            expect(r.delayMs).toBe(Math.max(per, ...hosts.filter((h) => h.host === r.host).map((h) => h.delayMs)));
          }
        },
      ),
    );
  });
});
