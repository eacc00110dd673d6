import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { archiveLabel, archiveLabelOf, archiveOrigin, isArchiveDomain } from './replay-origin.ts';

const key = fc.string({ minLength: 1, maxLength: 80 }).map((s) => `captures/${s}.wacz`);

describe('replay origins per archive', () => {
  it('each key has one origin, whose label names it back, and two keys never share one', () => {
    fc.assert(
      fc.property(key, key, (a, b) => {
        const origin = new URL(archiveOrigin({ protocol: 'http:', port: '8899' }, 'replay.localhost', a));
        expect(origin.port).toBe('8899');
        expect(archiveLabelOf(origin.hostname, 'replay.localhost')).toBe(archiveLabel(a));
        expect(archiveOrigin({ protocol: 'http:', port: '8899' }, 'replay.localhost', a)).toBe(origin.origin);
        if (a !== b) expect(archiveLabel(a)).not.toBe(archiveLabel(b));
      }),
    );
  });
  it('a host is an archive origin only with exactly a 32-hex label right under the domain', () => {
    const label = archiveLabel('captures/x.wacz');
    expect(archiveLabelOf(`${label}.replay.localhost`, 'replay.localhost')).toBe(label);
    expect(archiveLabelOf('replay.localhost', 'replay.localhost')).toBeNull();
    expect(archiveLabelOf(`x.${label}.replay.localhost`, 'replay.localhost')).toBeNull();
    expect(archiveLabelOf(`${label.slice(1)}.replay.localhost`, 'replay.localhost')).toBeNull();
    expect(archiveLabelOf(`${label}.evilreplay.localhost`, 'replay.localhost')).toBeNull();
    expect(archiveLabelOf(`${label}.replay.localhost.evil.test`, 'replay.localhost')).toBeNull();
    expect(archiveLabelOf(`${label.toUpperCase()}.replay.localhost`, 'replay.localhost')).toBeNull();
  });
  it('the default port is left out, and the scheme kept', () => {
    expect(archiveOrigin({ protocol: 'https:', port: '' }, 'replay.example.org', 'k.wacz')).toBe(`https://${archiveLabel('k.wacz')}.replay.example.org`);
  });
  it('a domain is DNS labels, two at least', () => {
    for (const ok of ['replay.localhost', 'a.b.c', 'replay-1.example.org']) expect(isArchiveDomain(ok), ok).toBe(true);
    for (const bad of ['localhost', '', '.localhost', 'replay..localhost', 'Replay.localhost', 'replay.localhost:8899', '*.replay.localhost', '-a.localhost'])
      expect(isArchiveDomain(bad), bad).toBe(false);
  });
});
