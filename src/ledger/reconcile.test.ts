import { describe, expect, it } from 'vitest';
import type { Manifest } from '../domain/contract.ts';
import { decideReconcile, formatReconcileResult, parseReconcileArgs, type PendingRow } from './reconcile.ts';

const now = new Date('2025-01-02T03:04:05.000Z');
const row: PendingRow = {
  task_id: 't1',
  crawl_id: '00000000-0000-4000-8000-000000000001',
  url: 'http://a.test/',
  manifest_key: 'captures/c/0/t1.result.json',
  manifest_version: null,
  reported_at: now,
};
const wacz = { format: 'wacz' as const, bucket: 'captures', key: 'captures/c/0/t1.wacz', sha256: 'ab', size: 10 };
const manifest = (m: Partial<Manifest> = {}): Manifest => ({
  taskId: 't1',
  url: 'http://a.test/',
  status: 'succeeded',
  artifacts: [wacz],
  finishedAt: '2025-01-01T00:00:00Z',
  ...m,
});

describe('decideReconcile', () => {
  it('registers a succeeded capture with a WACZ, as admission would', () => {
    const o = decideReconcile(row, { kind: 'ok', manifest: manifest({ finalUrl: 'http://a.test/x' }) }, now);
    expect(o.kind).toBe('register');
    if (o.kind !== 'register') return;
    expect(o.archive).toMatchObject({
      taskId: 't1',
      bucket: 'captures',
      objectKey: wacz.key,
      url: 'http://a.test/',
      finalUrl: 'http://a.test/x',
      size: 10,
      capturedAt: '2025-01-01T00:00:00.000Z',
    });
    expect(o.archive.provenance).toMatchObject({ manifestKey: row.manifest_key, formats: ['wacz'] });
  });

  it('skips a cancelled capture and fails its page', () => {
    const o = decideReconcile(row, { kind: 'ok', manifest: manifest({ status: 'failed', artifacts: [], error: { type: 'ERROR_TYPE_CANCELLED' } }) }, now);
    expect(o).toMatchObject({ kind: 'skip', reason: 'cancelled', page: 'failed' });
  });

  it('skips a failed capture and fails its page', () => {
    expect(decideReconcile(row, { kind: 'ok', manifest: manifest({ status: 'failed', artifacts: [] }) }, now)).toMatchObject({
      kind: 'skip',
      reason: 'failed',
      page: 'failed',
    });
  });

  it('skips a success without a WACZ but keeps its page captured', () => {
    expect(decideReconcile(row, { kind: 'ok', manifest: manifest({ artifacts: [] }) }, now)).toMatchObject({
      kind: 'skip',
      reason: 'no-wacz',
      page: 'captured',
    });
  });

  it('missing, unreadable and invalid reads', () => {
    expect(decideReconcile(row, { kind: 'missing' }, now).kind).toBe('missing');
    expect(decideReconcile(row, { kind: 'unreadable', error: 'ECONNREFUSED' }, now)).toMatchObject({ kind: 'unreadable', error: 'ECONNREFUSED' });
    expect(decideReconcile(row, { kind: 'invalid', error: 'not JSON' }, now)).toMatchObject({ kind: 'skip', reason: 'invalid', page: null });
  });

  it('skips a manifest whose artifacts lie outside its prefix or bucket and fails its page', () => {
    expect(decideReconcile(row, { kind: 'refused', error: 'artifact "x" (wacz) is not under "captures/c/0/"' }, now)).toMatchObject({
      kind: 'skip',
      reason: 'refused',
      page: 'failed',
    });
  });

  it('a capture whose crawl is gone has nothing to hang its tuple on', () => {
    expect(decideReconcile({ ...row, crawl_id: null }, { kind: 'ok', manifest: manifest() }, now)).toMatchObject({
      kind: 'skip',
      reason: 'no-crawl',
      page: null,
    });
  });
});

describe('parseReconcileArgs', () => {
  it('accepts nothing, --since-days n and --since-days=n', () => {
    expect(parseReconcileArgs([])).toEqual({});
    expect(parseReconcileArgs(['--since-days', '30'])).toEqual({ sinceDays: 30 });
    expect(parseReconcileArgs(['--since-days=0.5'])).toEqual({ sinceDays: 0.5 });
  });
  it('refuses anything else, naming it', () => {
    expect(() => parseReconcileArgs(['--since-days'])).toThrow(/needs a number/);
    expect(() => parseReconcileArgs(['--since-days', '-1'])).toThrow(/≥ 0, got "-1"/);
    expect(() => parseReconcileArgs(['--since-days', 'ten'])).toThrow(/got "ten"/);
    expect(() => parseReconcileArgs(['--since-days', '1', '--since-days', '2'])).toThrow(/twice/);
    expect(() => parseReconcileArgs(['30'])).toThrow(/unknown argument "30"/);
  });
});

describe('formatReconcileResult', () => {
  it('prints the four counts, skip reasons, and unreadable only when there were any', () => {
    expect(formatReconcileResult({ pending: 4, registered: 2, skipped: 1, missing: 1, unreadable: 0, skippedBy: { cancelled: 1 }, pagesCorrected: 2 })).toEqual(
      ['pending 4', 'registered 2', 'skipped 1 (cancelled 1)', 'missing 1'],
    );
    expect(formatReconcileResult({ pending: 1, registered: 0, skipped: 0, missing: 0, unreadable: 1, skippedBy: {}, pagesCorrected: 0 })).toEqual([
      'pending 1',
      'registered 0',
      'skipped 0',
      'missing 0',
      'unreadable 1 (the store could not be asked; they stay pending for the next run)',
    ]);
  });
});
