import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import type { Manifest, PageReport } from './contract.ts';
import { ERROR_TYPE_CANCELLED } from './contract.ts';
import {
  ManifestShapeError,
  admitPage,
  archiveFromManifest,
  checkManifestTask,
  parseLinksArtifact,
  parseManifest,
  qaNote,
  thumbnailFromProvenance,
  type ManifestRead,
} from './admission.ts';

const now = new Date('2025-03-01T00:00:00.000Z');

function manifest(over: Partial<Manifest> = {}): Manifest {
  return {
    taskId: 't1',
    url: 'https://a.test/',
    finalUrl: 'https://a.test/home',
    status: 'succeeded',
    artifacts: [
      { format: 'wacz', bucket: 'captures', key: 'k/t1.wacz', sha256: 'abc', size: 123 },
      { format: 'links', bucket: 'captures', key: 'k/t1.links.json', sha256: 'def', size: 9 },
    ],
    software: 'ref-flow',
    startedAt: '2025-02-01T00:00:00.000Z',
    finishedAt: '2025-02-01T00:00:02.000Z',
    ...over,
  };
}

function page(over: Partial<PageReport> = {}): PageReport {
  return {
    url: 'https://a.test/',
    status: 'captured',
    taskId: 't1',
    manifestKey: 'k/t1.result.json',
    submittedAt: '2025-02-01T00:00:00.000Z',
    finishedAt: '2025-02-01T00:00:02.500Z',
    ...over,
  };
}

describe('parseManifest', () => {
  it('reads a manifest', () => {
    expect(parseManifest(JSON.stringify(manifest()))).toEqual(manifest());
  });
  it('defaults missing artifacts to none', () => {
    const { artifacts: _a, ...rest } = manifest({ status: 'failed' });
    expect(parseManifest(JSON.stringify(rest)).artifacts).toEqual([]);
  });
  it('refuses what is not a manifest', () => {
    for (const bad of [
      'nope',
      '[]',
      '{}',
      JSON.stringify({ taskId: 't', url: 'u', status: 'done' }),
      JSON.stringify({ ...manifest(), artifacts: [{ format: 'wacz' }] }),
      JSON.stringify({ ...manifest(), error: 'x' }),
    ]) {
      expect(() => parseManifest(bad)).toThrow(ManifestShapeError);
    }
  });

  it('refuses a NUL character in any string or key, the one thing the ledger cannot store', () => {
    for (const bad of [
      { ...manifest(), software: 'a\u0000b' },
      { ...manifest(), url: '\u0000' },
      { ...manifest(), extra: { 'k\u0000': 1 } },
      { ...manifest(), artifacts: [{ format: 'wacz', bucket: 'b', key: 'x\u0000.wacz' }] },
    ]) {
      expect(() => parseManifest(JSON.stringify(bad))).toThrow('manifest has a NUL character in a string');
    }
    // an escaped backslash before u0000 is text, not a NUL
    expect(parseManifest(JSON.stringify({ ...manifest(), software: 'a\\u0000b' })).software).toBe('a\\u0000b');
  });
});

describe('parseLinksArtifact', () => {
  it('keeps well-formed links only', () => {
    expect(parseLinksArtifact(JSON.stringify({ url: 'u', links: [{ href: 'a' }, { href: 'b', rel: 'nofollow' }, { nope: 1 }, 'x'] }))).toEqual({
      url: 'u',
      links: [{ href: 'a' }, { href: 'b', rel: 'nofollow' }],
    });
    expect(() => parseLinksArtifact('{}')).toThrow(ManifestShapeError);
  });
});

describe('archiveFromManifest', () => {
  it('admits a succeeded capture with its WACZ', () => {
    const d = archiveFromManifest(manifest(), { manifestKey: 'k/t1.result.json', now });
    expect(d).toEqual({
      admit: true,
      archive: {
        taskId: 't1',
        bucket: 'captures',
        objectKey: 'k/t1.wacz',
        url: 'https://a.test/',
        finalUrl: 'https://a.test/home',
        sha256: 'abc',
        size: 123,
        capturedAt: '2025-02-01T00:00:02.000Z',
        provenance: {
          manifestKey: 'k/t1.result.json',
          formats: ['wacz', 'links'],
          software: 'ref-flow',
          startedAt: '2025-02-01T00:00:00.000Z',
          finishedAt: '2025-02-01T00:00:02.000Z',
        },
      },
    });
  });
  it('carries the archives its WACZ requires: each once, sorted, never itself', () => {
    const d = archiveFromManifest(manifest({ requires: ['k/b.wacz', 'k/t1.wacz', 'k/a.wacz', 'k/b.wacz'] }), { manifestKey: 'k/t1.result.json', now });
    expect(d.admit && d.archive.requires).toEqual(['k/a.wacz', 'k/b.wacz']);
    const none = archiveFromManifest(manifest({ requires: ['k/t1.wacz'] }), { manifestKey: 'k/t1.result.json', now });
    expect(none.admit && 'requires' in none.archive).toBe(false);
  });
  it('reads a manifest whose requires fits the contract, and refuses one that does not', () => {
    expect(parseManifest(JSON.stringify(manifest({ requires: ['k/a.wacz'] }))).requires).toEqual(['k/a.wacz']);
    expect(() => parseManifest(JSON.stringify({ ...manifest(), requires: 'k/a.wacz' }))).toThrow(ManifestShapeError);
    expect(() => parseManifest(JSON.stringify({ ...manifest(), requires: Array.from({ length: 65 }, (_, i) => `k/${i}.wacz`) }))).toThrow(ManifestShapeError);
  });
  it('never admits failed, cancelled or WACZ-less captures', () => {
    expect(archiveFromManifest(manifest({ status: 'failed', artifacts: [] }), { manifestKey: 'k', now })).toEqual({ admit: false, reason: 'failed' });
    expect(archiveFromManifest(manifest({ status: 'failed', error: { type: ERROR_TYPE_CANCELLED }, artifacts: [] }), { manifestKey: 'k', now })).toEqual({
      admit: false,
      reason: 'cancelled',
    });
    // even a manifest that claims success is not admitted when it says cancelled
    expect(archiveFromManifest(manifest({ error: { type: ERROR_TYPE_CANCELLED } }), { manifestKey: 'k', now })).toEqual({ admit: false, reason: 'cancelled' });
    expect(
      archiveFromManifest(manifest({ artifacts: [{ format: 'png', bucket: 'b', key: 'x.png', sha256: 's', size: 1 }] }), { manifestKey: 'k', now }),
    ).toEqual({ admit: false, reason: 'no-wacz' });
  });
  it("keeps the capture's truncation note in provenance, and drops one it cannot read rather than the archive", () => {
    const kept = archiveFromManifest(manifest({ truncated: { text: 62_914_560 } }), { manifestKey: 'k', now });
    expect(kept.admit && kept.archive.provenance.truncated).toEqual({ text: 62_914_560 });
    const odd = archiveFromManifest(JSON.parse(JSON.stringify({ ...manifest(), truncated: { text: 'lots' } })) as Manifest, { manifestKey: 'k', now });
    expect(odd.admit).toBe(true);
    expect(odd.admit && odd.archive.provenance).not.toHaveProperty('truncated');
    const none = archiveFromManifest(manifest(), { manifestKey: 'k', now });
    expect(none.admit && none.archive.provenance).not.toHaveProperty('truncated');
  });
  it("keeps the page's title and where its screenshot is (webp before png), and reads them back", () => {
    const shot = (format: 'png' | 'webp') => ({ format, bucket: 'captures', key: `k/t1.${format}`, sha256: 's', size: 1 });
    const both = archiveFromManifest(manifest({ title: 'Home', artifacts: [...manifest().artifacts, shot('png'), shot('webp')] }), { manifestKey: 'k', now });
    expect(both.admit && both.archive.provenance.title).toBe('Home');
    expect(both.admit && both.archive.provenance.thumbnail).toEqual({ format: 'webp', bucket: 'captures', key: 'k/t1.webp' });
    const png = archiveFromManifest(manifest({ artifacts: [...manifest().artifacts, shot('png')] }), { manifestKey: 'k', now });
    expect(png.admit && thumbnailFromProvenance(png.archive.provenance)).toEqual({ format: 'png', bucket: 'captures', key: 'k/t1.png' });
    const none = archiveFromManifest(manifest(), { manifestKey: 'k', now });
    expect(none.admit && none.archive.provenance).not.toHaveProperty('thumbnail');
    expect(none.admit && none.archive.provenance).not.toHaveProperty('title');
    for (const odd of [undefined, null, 'x', { format: 'gif', bucket: 'b', key: 'k' }, { format: 'png', bucket: 1, key: 'k' }])
      expect(thumbnailFromProvenance({ thumbnail: odd })).toBeUndefined();
  });

  it('pins the archive and its screenshot to the versions the capture reported writing, and only to a version it reported', () => {
    const wacz = { format: 'wacz' as const, bucket: 'captures', key: 'k/t1.wacz', sha256: 'abc', size: 123 };
    const shot = { format: 'png' as const, bucket: 'captures', key: 'k/t1.png', sha256: 's', size: 1 };
    const pinned = archiveFromManifest(
      manifest({
        artifacts: [
          { ...wacz, versionId: 'v-wacz' },
          { ...shot, versionId: 'v-png' },
        ],
      }),
      { manifestKey: 'k', now },
    );
    expect(pinned.admit && pinned.archive.objectVersion).toBe('v-wacz');
    expect(pinned.admit && thumbnailFromProvenance(pinned.archive.provenance)).toEqual({
      format: 'png',
      bucket: 'captures',
      key: 'k/t1.png',
      versionId: 'v-png',
    });
    const unversioned = archiveFromManifest(manifest({ artifacts: [wacz, shot] }), { manifestKey: 'k', now });
    expect(unversioned.admit && unversioned.archive).not.toHaveProperty('objectVersion');
    expect(unversioned.admit && thumbnailFromProvenance(unversioned.archive.provenance)).not.toHaveProperty('versionId');
    // a stored thumbnail whose version is not a string is read as unversioned, not refused
    expect(thumbnailFromProvenance({ thumbnail: { format: 'png', bucket: 'b', key: 'k', versionId: 7 } })).toEqual({ format: 'png', bucket: 'b', key: 'k' });
  });
  it('falls back to the report, then to now, for the capture time', () => {
    const a = archiveFromManifest(manifest({ finishedAt: undefined }), { manifestKey: 'k', fallbackFinishedAt: '2025-02-02T00:00:00Z', now });
    expect(a.admit && a.archive.capturedAt).toBe('2025-02-02T00:00:00.000Z');
    const b = archiveFromManifest(manifest({ finishedAt: 'garbage' }), { manifestKey: 'k', now });
    expect(b.admit && b.archive.capturedAt).toBe(now.toISOString());
  });

  it('a time outside years 1–9999 is no time: the fallback is used', () => {
    for (const far of ['+275760-09-13T00:00:00.000Z', '+010000-01-01T00:00:00.000Z', '0000-12-31T23:59:59.999Z', '-000001-01-01T00:00:00.000Z']) {
      const a = archiveFromManifest(manifest({ finishedAt: far }), { manifestKey: 'k', fallbackFinishedAt: '2025-02-02T00:00:00Z', now });
      expect(a.admit && a.archive.capturedAt, far).toBe('2025-02-02T00:00:00.000Z');
    }
    for (const edge of ['0001-01-01T00:00:00.000Z', '9999-12-31T23:59:59.999Z']) {
      const a = archiveFromManifest(manifest({ finishedAt: edge }), { manifestKey: 'k', now });
      expect(a.admit && a.archive.capturedAt).toBe(edge);
    }
  });

  it('a size that is not a whole number of bytes a bigint holds is unknown', () => {
    const sized = (size: number): number | null => {
      const a = archiveFromManifest(manifest({ artifacts: [{ format: 'wacz', bucket: 'b', key: 'k.wacz', sha256: 's', size }] }), { manifestKey: 'k', now });
      return a.admit ? a.archive.size : NaN;
    };
    for (const bad of [12.5, -1, Number.MAX_SAFE_INTEGER + 1, 1e20, NaN, Infinity]) expect(sized(bad), String(bad)).toBeNull();
    for (const good of [0, 1234, Number.MAX_SAFE_INTEGER]) expect(sized(good)).toBe(good);
  });
});

describe('admitPage', () => {
  const ok = (m: Manifest = manifest()): ManifestRead => ({ kind: 'ok', manifest: m });

  it('a captured page with its manifest becomes an archive', () => {
    const a = admitPage(page(), ok(), now);
    expect(a.state).toBe('captured');
    expect(a.corrected).toBe(false);
    expect(a.archive?.objectKey).toBe('k/t1.wacz');
    expect(a.links).toEqual({ bucket: 'captures', key: 'k/t1.links.json' });
    expect(a.finalUrl).toBe('https://a.test/home');
    expect(a.submittedAt).toBe('2025-02-01T00:00:00.000Z');
    expect(a.finishedAt).toBe('2025-02-01T00:00:02.500Z');
  });

  it('the manifest wins: reported failed, manifest succeeded → captured', () => {
    const a = admitPage(page({ status: 'failed' }), ok(), now);
    expect(a.state).toBe('captured');
    expect(a.corrected).toBe(true);
    expect(a.archive).not.toBeNull();
  });

  it('the manifest wins the other way too: reported captured, manifest failed → failed, no archive', () => {
    const a = admitPage(page(), ok(manifest({ status: 'failed', artifacts: [] })), now);
    expect(a.state).toBe('failed');
    expect(a.corrected).toBe(true);
    expect(a.archive).toBeNull();
    expect(a.notAdmitted).toBe('failed');
  });

  it('a cancelled capture stays failed and gets no archive', () => {
    const a = admitPage(page({ status: 'failed' }), ok(manifest({ status: 'failed', error: { type: ERROR_TYPE_CANCELLED }, artifacts: [] })), now);
    expect(a.state).toBe('failed');
    expect(a.corrected).toBe(false);
    expect(a.archive).toBeNull();
    expect(a.notAdmitted).toBe('cancelled');
    expect(a.links).toBeNull();
  });

  it('without a readable manifest the report stands and nothing is admitted', () => {
    for (const read of [{ kind: 'absent' }, { kind: 'missing' }, { kind: 'unreadable', error: 'down' }, { kind: 'invalid', error: 'x' }] as ManifestRead[]) {
      const a = admitPage(page(), read, now);
      expect(a.state).toBe('captured');
      expect(a.archive).toBeNull();
      expect(a.links).toBeNull();
    }
  });

  it('a manifest of another task is not believed', () => {
    const read = checkManifestTask(ok(manifest({ taskId: 'other' })), 't1');
    expect(read.kind).toBe('invalid');
    expect(admitPage(page(), ok(manifest({ taskId: 'other' })), now).archive).toBeNull();
  });

  it('robots skips keep their reason', () => {
    const a = admitPage({ url: 'https://a.test/private', status: 'skipped', skipReason: 'robots' }, { kind: 'absent' }, now);
    expect(a).toMatchObject({ state: 'skipped', skipReason: 'robots', taskId: null, archive: null });
  });

  it('an archive exists exactly when the manifest is readable, of this task, succeeded, not cancelled and has a WACZ', () => {
    const arbManifest = fc.record({
      taskId: fc.constantFrom('t1', 't2'),
      status: fc.constantFrom('succeeded' as const, 'failed' as const),
      cancelled: fc.boolean(),
      wacz: fc.boolean(),
    });
    fc.assert(
      fc.property(fc.constantFrom('captured' as const, 'failed' as const, 'skipped' as const), fc.option(arbManifest, { nil: undefined }), (status, mm) => {
        const read: ManifestRead =
          mm === undefined
            ? { kind: 'absent' }
            : {
                kind: 'ok',
                manifest: manifest({
                  taskId: mm.taskId,
                  status: mm.status,
                  ...(mm.cancelled ? { error: { type: ERROR_TYPE_CANCELLED } } : {}),
                  artifacts: mm.wacz ? manifest().artifacts : [],
                }),
              };
        const a = admitPage(page({ status }), read, now);
        const expected = mm !== undefined && mm.taskId === 't1' && mm.status === 'succeeded' && !mm.cancelled && mm.wacz;
        expect(a.archive !== null).toBe(expected);
        if (a.archive) expect(a.state).toBe('captured');
        if (mm?.cancelled && mm.taskId === 't1') expect(a.state).toBe('failed');
      }),
    );
  });
});

describe('qaNote', () => {
  const attempt = (n: 1 | 2, verdict: 'good' | 'review') => ({
    attempt: n,
    verdict,
    pixels: n === 1 ? 0.5 : 0.99,
    text: 1,
    misses: n === 1 ? 2 : 0,
    missed: [],
  });
  it("keeps the last attempt's verdict and scores, and how many were made", () => {
    expect(qaNote([attempt(1, 'review'), attempt(2, 'good')])).toEqual({ verdict: 'good', attempts: 2, pixels: 0.99, text: 1, misses: 0 });
    expect(qaNote([attempt(1, 'good')])).toEqual({ verdict: 'good', attempts: 1, pixels: 0.5, text: 1, misses: 2 });
  });
  it('leaves out a check in any other shape', () => {
    for (const bad of [
      undefined,
      [],
      {},
      [{ verdict: 'great' }],
      [attempt(1, 'good'), attempt(2, 'good'), attempt(2, 'good')],
      [{ ...attempt(1, 'good'), pixels: 2 }],
    ])
      expect(qaNote(bad)).toBeUndefined();
  });
  it('an admitted archive carries it in its provenance', () => {
    const d = archiveFromManifest(
      {
        taskId: 't',
        url: 'https://a.test/',
        status: 'succeeded',
        artifacts: [{ format: 'wacz', bucket: 'b', key: 'k.wacz', sha256: 'x', size: 1 }],
        qa: [attempt(1, 'review')],
      },
      { manifestKey: 'k.result.json', now: new Date(0) },
    );
    expect(d.admit && d.archive.provenance.qa).toEqual({ verdict: 'review', attempts: 1, pixels: 0.5, text: 1, misses: 2 });
  });
});
