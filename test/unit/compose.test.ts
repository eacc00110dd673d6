// compose.yaml must offer the same stack as `npm run stack:up` (scripts/lib/services.mjs).
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { OPENFGA_CACHE_FLAGS, SERVICES, PROFILES, TEMPORAL_DYNAMIC_CONFIG } from '../../scripts/lib/services.mjs';

interface ComposeService {
  image?: string;
  profiles?: string[];
  ports?: string[];
  command?: string[] | string;
}
const compose = parse(readFileSync(new URL('../../compose.yaml', import.meta.url), 'utf8')) as {
  services: Record<string, ComposeService>;
  configs?: Record<string, { content?: string }>;
};

describe('compose.yaml', () => {
  it('names every service the local stack starts', () => {
    expect(SERVICES.length).toBeGreaterThanOrEqual(5);
    const missing = SERVICES.map((s) => s.name).filter((name) => !(name in compose.services));
    expect(missing).toEqual([]);
  });

  it('puts profile services under the same compose profile, and no others', () => {
    for (const s of SERVICES) {
      const c = compose.services[s.name]!;
      if (s.profile) {
        expect(PROFILES).toContain(s.profile);
        expect(c.profiles, s.name).toEqual([s.profile]);
      } else expect(c.profiles, s.name).toBeUndefined();
    }
    expect(compose.services.opensearch?.profiles).toEqual(['search']);
  });

  it('uses pinned official images and publishes ports on 127.0.0.1 only', () => {
    for (const [name, c] of Object.entries(compose.services)) {
      expect(c.image, name).toMatch(/^[a-z0-9./-]+:[A-Za-z0-9._-]+$/);
      expect(c.image, name).not.toMatch(/:latest$/);
      for (const p of c.ports ?? []) expect(p, name).toMatch(/^127\.0\.0\.1:/);
    }
  });

  it('registers the crawl search attributes and configures an S3 identity', () => {
    const cmd = ([] as string[]).concat(compose.services.temporal!.command ?? []).join(' ');
    for (const key of ['CrawlId=Keyword', 'CrawlOrg=Keyword', 'CrawlState=Keyword']) expect(cmd).toContain(key);
    const s3 = JSON.parse(compose.configs!['seaweedfs-s3']!.content!) as { identities: { credentials: { accessKey: string }[] }[] };
    expect(s3.identities[0]!.credentials[0]!.accessKey).toBe('capture-ledger');
  });

  it("polls Temporal's history queues as often as they have work, as the local stack does", () => {
    const cmd = ([] as string[]).concat(compose.services.temporal!.command ?? []);
    for (const kv of TEMPORAL_DYNAMIC_CONFIG) expect(cmd).toContain(`--dynamic-config-value=${kv}`);
    expect(TEMPORAL_DYNAMIC_CONFIG).toEqual(['transfer', 'timer', 'visibility', 'outbound'].map((q) => `history.${q}ProcessorMaxPollRPS=1000`));
  });

  it('runs OpenFGA with the check-query and iterator caches on for 10 s, as the local stack does', () => {
    const cmd = ([] as string[]).concat(compose.services.openfga!.command ?? []);
    for (const flag of OPENFGA_CACHE_FLAGS) expect(cmd).toContain(flag);
    expect(OPENFGA_CACHE_FLAGS).toEqual(
      expect.arrayContaining([
        '--check-query-cache-enabled=true',
        '--check-query-cache-ttl=10s',
        '--check-iterator-cache-enabled=true',
        '--check-iterator-cache-ttl=10s',
      ]),
    );
  });
});
