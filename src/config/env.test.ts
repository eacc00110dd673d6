import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig, loadDatabaseUrl, loadFgaApiUrl, parseFormats, REQUIRED_ENV } from './env.ts';
import { MINIMAL_ENV } from './env.fixture.ts';

const BASE = MINIMAL_ENV;

function env(overrides: Record<string, string | undefined> = {}): Record<string, string | undefined> {
  return { ...BASE, ...overrides };
}

/** The ConfigError loadConfig throws for this environment (fails the test if it does not throw). */
function failure(e: Record<string, string | undefined>): ConfigError {
  try {
    loadConfig(e);
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return err as ConfigError;
  }
  throw new Error('loadConfig accepted the environment');
}

describe('loadConfig', () => {
  it('accepts the minimal environment and fills the defaults', () => {
    const c = loadConfig(env());
    expect(c.databaseUrl).toBe(BASE.CAPTURE_LEDGER_DATABASE_URL);
    expect(c.fga).toEqual({ apiUrl: 'http://127.0.0.1:8080', storeId: '01HSTORE', modelId: '01HMODEL' });
    expect(c.crawl.formats).toEqual(['wacz']);
    expect(c.crawl.signing).toBe(false);
    expect(c.crawl.webhook).toBeUndefined();
    expect(c.identity).toEqual({ mode: 'none' });
    expect(c.opensearch).toBeUndefined();
    expect(c.api.port).toBe(7070);
    expect(c.temporal).toEqual({ address: '127.0.0.1:7233', namespace: 'default', taskQueue: 'capture-ledger' });
    expect(c.s3.region).toBe('us-east-1');
  });

  it('accepts the shipped .env.example once the two deploy ids are filled in and the local secrets generated', async () => {
    const { readFileSync } = await import('node:fs');
    const { parseEnv } = await import('node:util');
    const example = parseEnv(readFileSync(new URL('../../.env.example', import.meta.url), 'utf8'));
    const secrets = Object.fromEntries(
      ['CAPTURE_LEDGER_FLOW_CLIENT_SECRET', 'CAPTURE_LEDGER_S3_SECRET_ACCESS_KEY', 'CAPTURE_LEDGER_CRAWL_WEBHOOK_TOKEN'].map((n) => [n, 'g'.repeat(43)]),
    );
    expect(() => loadConfig({ ...example, CAPTURE_LEDGER_FGA_STORE_ID: 's', CAPTURE_LEDGER_FGA_MODEL_ID: 'm' })).toThrow(/CAPTURE_LEDGER_S3_SECRET_ACCESS_KEY/);
    const c = loadConfig({ ...example, ...secrets, CAPTURE_LEDGER_FGA_STORE_ID: 's', CAPTURE_LEDGER_FGA_MODEL_ID: 'm' });
    expect(c.identity.mode).toBe('oidc');
    expect(c.crawl.webhook?.url).toBe('http://127.0.0.1:7072/crawl');
  });

  describe('REQUIRED_ENV', () => {
    it.each(REQUIRED_ENV.map((n) => [n]))('%s missing stops startup naming it', (name) => {
      const err = failure(env({ [name]: undefined }));
      expect(err.variable).toBe(name);
      expect(err.message).toBe(`${name}="": is required`);
    });

    it.each(REQUIRED_ENV.map((n) => [n]))('%s blank counts as missing', (name) => {
      expect(failure(env({ [name]: '   ' })).message).toBe(`${name}="   ": is required`);
    });
  });

  describe('CAPTURE_LEDGER_CAPTURE_FORMATS', () => {
    it('takes a comma list, trimmed and deduplicated', () => {
      expect(loadConfig(env({ CAPTURE_LEDGER_CAPTURE_FORMATS: 'png, wacz,links,wacz' })).crawl.formats).toEqual(['png', 'wacz', 'links']);
      expect(parseFormats({ CAPTURE_LEDGER_CAPTURE_FORMATS: 'png,webp,html,links,mhtml,wacz' })).toEqual(['png', 'webp', 'html', 'links', 'mhtml', 'wacz']);
    });

    it('defaults to wacz when unset or blank', () => {
      expect(loadConfig(env({ CAPTURE_LEDGER_CAPTURE_FORMATS: '' })).crawl.formats).toEqual(['wacz']);
    });

    it('a misspelling names the variable, the value and the bad item', () => {
      const err = failure(env({ CAPTURE_LEDGER_CAPTURE_FORMATS: 'wacz,pgn' }));
      expect(err.variable).toBe('CAPTURE_LEDGER_CAPTURE_FORMATS');
      expect(err.message).toBe('CAPTURE_LEDGER_CAPTURE_FORMATS="wacz,pgn": unknown capture format "pgn"; allowed: png,webp,html,links,mhtml,wacz');
    });

    it('an empty item is refused too', () => {
      expect(failure(env({ CAPTURE_LEDGER_CAPTURE_FORMATS: 'wacz,' })).message).toContain('CAPTURE_LEDGER_CAPTURE_FORMATS="wacz,": unknown capture format ""');
    });

    it('formats are case-sensitive', () => {
      expect(failure(env({ CAPTURE_LEDGER_CAPTURE_FORMATS: 'WACZ' })).message).toContain('unknown capture format "WACZ"');
    });
  });

  describe('CAPTURE_LEDGER_CAPTURE_SIGNING', () => {
    it('1 with wacz is accepted', () => {
      expect(loadConfig(env({ CAPTURE_LEDGER_CAPTURE_SIGNING: '1', CAPTURE_LEDGER_CAPTURE_FORMATS: 'png,wacz' })).crawl.signing).toBe(true);
    });

    it('1 without wacz stops startup, naming both settings', () => {
      const err = failure(env({ CAPTURE_LEDGER_CAPTURE_SIGNING: '1', CAPTURE_LEDGER_CAPTURE_FORMATS: 'png,html' }));
      expect(err.variable).toBe('CAPTURE_LEDGER_CAPTURE_SIGNING');
      expect(err.message).toBe('CAPTURE_LEDGER_CAPTURE_SIGNING="1": signing needs wacz in CAPTURE_LEDGER_CAPTURE_FORMATS (now png,html)');
    });

    it('0, false and blank mean off', () => {
      for (const v of ['0', 'false', '']) expect(loadConfig(env({ CAPTURE_LEDGER_CAPTURE_SIGNING: v })).crawl.signing).toBe(false);
    });

    it('anything else is refused', () => {
      expect(failure(env({ CAPTURE_LEDGER_CAPTURE_SIGNING: 'yes' })).message).toBe('CAPTURE_LEDGER_CAPTURE_SIGNING="yes": must be 1 or 0');
    });
  });

  describe('the crawl webhook: both or neither', () => {
    it('both set', () => {
      expect(
        loadConfig(env({ CAPTURE_LEDGER_CRAWL_WEBHOOK_URL: 'http://127.0.0.1:7072/crawl', CAPTURE_LEDGER_CRAWL_WEBHOOK_TOKEN: 't' })).crawl.webhook,
      ).toEqual({
        url: 'http://127.0.0.1:7072/crawl',
        token: 't',
      });
    });

    it('URL without token names the token, and the URL that is set', () => {
      const err = failure(env({ CAPTURE_LEDGER_CRAWL_WEBHOOK_URL: 'http://127.0.0.1:7072/crawl' }));
      expect(err.variable).toBe('CAPTURE_LEDGER_CRAWL_WEBHOOK_TOKEN');
      expect(err.message).toBe(
        'CAPTURE_LEDGER_CRAWL_WEBHOOK_TOKEN="": is not set but CAPTURE_LEDGER_CRAWL_WEBHOOK_URL is (http://127.0.0.1:7072/crawl): set both or neither',
      );
    });

    it('token without URL names the URL and never prints the token', () => {
      const err = failure(env({ CAPTURE_LEDGER_CRAWL_WEBHOOK_TOKEN: 's3cret-token' }));
      expect(err.variable).toBe('CAPTURE_LEDGER_CRAWL_WEBHOOK_URL');
      expect(err.message).toBe('CAPTURE_LEDGER_CRAWL_WEBHOOK_URL="": is not set but CAPTURE_LEDGER_CRAWL_WEBHOOK_TOKEN is: set both or neither');
      expect(err.message).not.toContain('s3cret-token');
    });

    it('a blank URL with a token is still half-set', () => {
      expect(failure(env({ CAPTURE_LEDGER_CRAWL_WEBHOOK_URL: ' ', CAPTURE_LEDGER_CRAWL_WEBHOOK_TOKEN: 't' })).variable).toBe(
        'CAPTURE_LEDGER_CRAWL_WEBHOOK_URL',
      );
    });

    it('a URL that is not one is refused', () => {
      expect(failure(env({ CAPTURE_LEDGER_CRAWL_WEBHOOK_URL: 'localhost:7072', CAPTURE_LEDGER_CRAWL_WEBHOOK_TOKEN: 't' })).message).toBe(
        'CAPTURE_LEDGER_CRAWL_WEBHOOK_URL="localhost:7072": has the scheme localhost; expected http or https',
      );
    });
  });

  describe('URLs', () => {
    /** [variable, value, the message that refuses it] */
    const notAUrl = (name: string, value: string): [string, string, string] => [name, value, `${name}="${value}": is not a URL`];
    const wrongScheme = (name: string, value: string, scheme: string, expected: string): [string, string, string] => [
      name,
      value,
      `${name}="${value}": has the scheme ${scheme}; expected ${expected}`,
    ];
    it.each([
      notAUrl('CAPTURE_LEDGER_FGA_API_URL', 'not a url'),
      wrongScheme('CAPTURE_LEDGER_FGA_API_URL', 'ftp://127.0.0.1:8080', 'ftp', 'http or https'),
      notAUrl('CAPTURE_LEDGER_S3_ENDPOINT', '127.0.0.1:8333'),
      wrongScheme('CAPTURE_LEDGER_DATABASE_URL', 'http://127.0.0.1:55432/x', 'http', 'postgres or postgresql'),
      notAUrl('CAPTURE_LEDGER_DATABASE_URL', 'capture_ledger'),
      notAUrl('CAPTURE_LEDGER_OPENSEARCH_URL', 'http//127.0.0.1:9200'),
      notAUrl('CAPTURE_LEDGER_OIDC_ISSUER', 'issuer.example'),
      wrongScheme('CAPTURE_LEDGER_PUBLIC_URL', 'postgres://127.0.0.1/x', 'postgres', 'http or https'),
      wrongScheme('CAPTURE_LEDGER_REPLAY_URL', 'file:///tmp/replay', 'file', 'http or https'),
    ])('%s=%s is refused', (name, value, message) => {
      const err = failure(env({ [name]: value }));
      expect(err.variable).toBe(name);
      expect(err.value).toBe(value);
      expect(err.message).toBe(message);
    });

    it('postgresql:// is a database URL too', () => {
      expect(loadConfig(env({ CAPTURE_LEDGER_DATABASE_URL: 'postgresql://u@h/db' })).databaseUrl).toBe('postgresql://u@h/db');
    });

    it('an origin per archive only with a DNS name to put them under', () => {
      expect(loadConfig(env()).replayArchiveDomain).toBeUndefined();
      expect(loadConfig(env({ CAPTURE_LEDGER_REPLAY_ARCHIVE_DOMAIN: 'replay.localhost' })).replayArchiveDomain).toBe('replay.localhost');
      const err = failure(env({ CAPTURE_LEDGER_REPLAY_ARCHIVE_DOMAIN: 'localhost:8899' }));
      expect(err.variable).toBe('CAPTURE_LEDGER_REPLAY_ARCHIVE_DOMAIN');
      expect(err.message).toContain('must be a lowercase DNS name of two labels or more');
    });

    it('OpenSearch is on only when its URL is set', () => {
      expect(loadConfig(env({ CAPTURE_LEDGER_OPENSEARCH_URL: 'http://127.0.0.1:9200' })).opensearch).toEqual({
        url: 'http://127.0.0.1:9200',
        index: 'capture-ledger-pages',
      });
      expect(loadConfig(env({ CAPTURE_LEDGER_OPENSEARCH_URL: '' })).opensearch).toBeUndefined();
    });
  });

  describe('ports and numbers', () => {
    it.each(['CAPTURE_LEDGER_API_PORT', 'CAPTURE_LEDGER_ISSUER_PORT', 'CAPTURE_LEDGER_FLOW_PORT', 'CAPTURE_LEDGER_REPLAY_PORT'].map((n) => [n]))(
      '%s',
      (name) => {
        expect(failure(env({ [name]: 'http' })).message).toBe(`${name}="http": is not a whole number`);
        expect(failure(env({ [name]: '-1' })).message).toBe(`${name}="-1": is not a whole number`);
        expect(failure(env({ [name]: '80.5' })).message).toBe(`${name}="80.5": is not a whole number`);
        expect(failure(env({ [name]: '0' })).message).toBe(`${name}="0": must be between 1 and 65535`);
        expect(failure(env({ [name]: '65536' })).message).toBe(`${name}="65536": must be between 1 and 65535`);
      },
    );

    it('a good port is taken, and the API port feeds the default public URL', () => {
      const c = loadConfig(env({ CAPTURE_LEDGER_API_PORT: '9999', CAPTURE_LEDGER_PUBLIC_URL: undefined }));
      expect(c.api.port).toBe(9999);
      expect(c.api.publicUrl).toBe('http://127.0.0.1:9999');
    });

    it('the level timeout must be a positive whole number of seconds', () => {
      expect(loadConfig(env({ CAPTURE_LEDGER_LEVEL_TIMEOUT_SECONDS: '60' })).crawl.levelTimeoutSeconds).toBe(60);
      expect(failure(env({ CAPTURE_LEDGER_LEVEL_TIMEOUT_SECONDS: '0' })).message).toBe(
        'CAPTURE_LEDGER_LEVEL_TIMEOUT_SECONDS="0": must be between 1 and 604800',
      );
      expect(failure(env({ CAPTURE_LEDGER_LEVEL_TIMEOUT_SECONDS: '30m' })).message).toBe('CAPTURE_LEDGER_LEVEL_TIMEOUT_SECONDS="30m": is not a whole number');
    });

    it('the Temporal address must be host:port', () => {
      expect(loadConfig(env({ CAPTURE_LEDGER_TEMPORAL_ADDRESS: 'temporal:7233' })).temporal.address).toBe('temporal:7233');
      expect(failure(env({ CAPTURE_LEDGER_TEMPORAL_ADDRESS: 'http://127.0.0.1:7233' })).message).toBe(
        'CAPTURE_LEDGER_TEMPORAL_ADDRESS="http://127.0.0.1:7233": must be host:port (port 1-65535)',
      );
      expect(failure(env({ CAPTURE_LEDGER_TEMPORAL_ADDRESS: '127.0.0.1' })).variable).toBe('CAPTURE_LEDGER_TEMPORAL_ADDRESS');
      expect(failure(env({ CAPTURE_LEDGER_TEMPORAL_ADDRESS: '127.0.0.1:99999' })).variable).toBe('CAPTURE_LEDGER_TEMPORAL_ADDRESS');
    });
  });

  describe('identity mode', () => {
    it('nothing configured: none', () => {
      expect(loadConfig(env()).identity).toEqual({ mode: 'none' });
      expect(loadConfig(env({ CAPTURE_LEDGER_DEV_IDENTITY: '0' })).identity).toEqual({ mode: 'none' });
    });

    it('DEV_IDENTITY=1: dev', () => {
      expect(loadConfig(env({ CAPTURE_LEDGER_DEV_IDENTITY: '1' })).identity).toEqual({ mode: 'dev' });
    });

    it('OIDC issuer: oidc, with the default audience', () => {
      expect(loadConfig(env({ CAPTURE_LEDGER_OIDC_ISSUER: 'http://127.0.0.1:7071' })).identity).toEqual({
        mode: 'oidc',
        issuer: 'http://127.0.0.1:7071',
        audience: 'capture-ledger',
        devIdentityAlsoSet: false,
      });
    });

    it('OIDC wins over dev when both are set (the weaker one must not be what runs)', () => {
      expect(
        loadConfig(env({ CAPTURE_LEDGER_OIDC_ISSUER: 'https://id.example', CAPTURE_LEDGER_OIDC_AUDIENCE: 'aud', CAPTURE_LEDGER_DEV_IDENTITY: '1' })).identity,
      ).toEqual({
        mode: 'oidc',
        issuer: 'https://id.example',
        audience: 'aud',
        devIdentityAlsoSet: true,
      });
    });

    it('OIDC: the capture flow’s client secret, at least 32 characters, never shown in the error', () => {
      const secret = 'a-flow-secret-of-enough-characters-0123';
      expect(loadConfig(env({ CAPTURE_LEDGER_OIDC_ISSUER: 'http://127.0.0.1:7071', CAPTURE_LEDGER_FLOW_CLIENT_SECRET: secret })).identity).toMatchObject({
        mode: 'oidc',
        flowClientSecret: secret,
      });
      expect(loadConfig(env({ CAPTURE_LEDGER_OIDC_ISSUER: 'http://127.0.0.1:7071' })).identity).not.toHaveProperty('flowClientSecret');
      const short = failure(env({ CAPTURE_LEDGER_OIDC_ISSUER: 'http://127.0.0.1:7071', CAPTURE_LEDGER_FLOW_CLIENT_SECRET: 'short-secret' }));
      expect(short.variable).toBe('CAPTURE_LEDGER_FLOW_CLIENT_SECRET');
      expect(short.message).toMatch(/at least 32 characters/);
      expect(short.message).not.toContain('short-secret');
    });

    it('a bad DEV_IDENTITY value is refused, even beside OIDC', () => {
      expect(failure(env({ CAPTURE_LEDGER_DEV_IDENTITY: 'on' })).message).toBe('CAPTURE_LEDGER_DEV_IDENTITY="on": must be 1 or 0');
      expect(failure(env({ CAPTURE_LEDGER_DEV_IDENTITY: 'on', CAPTURE_LEDGER_OIDC_ISSUER: 'https://id.example' })).variable).toBe(
        'CAPTURE_LEDGER_DEV_IDENTITY',
      );
    });
  });
});

describe('partial loaders for the steps that run before fga:deploy', () => {
  it('loadDatabaseUrl needs only the database URL, and checks it', () => {
    expect(loadDatabaseUrl({ CAPTURE_LEDGER_DATABASE_URL: 'postgres://h/db' })).toBe('postgres://h/db');
    expect(() => loadDatabaseUrl({})).toThrow('CAPTURE_LEDGER_DATABASE_URL="": is required');
    expect(() => loadDatabaseUrl({ CAPTURE_LEDGER_DATABASE_URL: 'http://h/db' })).toThrow(ConfigError);
  });

  it('loadFgaApiUrl needs only the OpenFGA URL, and checks it', () => {
    expect(loadFgaApiUrl({ CAPTURE_LEDGER_FGA_API_URL: 'http://127.0.0.1:8080' })).toBe('http://127.0.0.1:8080');
    expect(() => loadFgaApiUrl({})).toThrow('CAPTURE_LEDGER_FGA_API_URL="": is required');
    expect(() => loadFgaApiUrl({ CAPTURE_LEDGER_FGA_API_URL: '8080' })).toThrow('CAPTURE_LEDGER_FGA_API_URL="8080": is not a URL');
  });
});

describe('CAPTURE_LEDGER_CAPTURE_ALLOW and the stack ports', () => {
  it('is empty by default, and reads CIDRs and host:port pairs', () => {
    expect(loadConfig(env()).capture.allow).toEqual([]);
    const c = loadConfig(env({ CAPTURE_LEDGER_CAPTURE_ALLOW: '127.0.0.2/31, fd00::/8,site.test:3000' }));
    expect(c.capture.allow.map((e) => [e.kind, e.text])).toEqual([
      ['cidr', '127.0.0.2/31'],
      ['cidr', 'fd00::/8'],
      ['host-port', 'site.test:3000'],
    ]);
  });
  it('a host:port entry on a stack port or the stack own address stops startup, naming it', () => {
    for (const [entry, why] of [
      ['site.test:8080', "port 8080 is one of the stack's own"],
      ['site.test:7243', "port 7243 is one of the stack's own"],
      ['127.0.0.1:3000', "the stack's own address"],
      ['[::1]:3000', "the stack's own address"],
    ] as const) {
      const e = failure(env({ CAPTURE_LEDGER_CAPTURE_ALLOW: `127.0.0.2/31,${entry}`, CAPTURE_LEDGER_TEMPORAL_UI_PORT: '7243' }));
      expect(e.variable).toBe('CAPTURE_LEDGER_CAPTURE_ALLOW');
      expect(e.message).toContain(JSON.stringify(entry));
      expect(e.message).toContain(why);
    }
  });
  it('a bad entry stops startup with a message naming it', () => {
    const e = failure(env({ CAPTURE_LEDGER_CAPTURE_ALLOW: '10.0.0.0/8,10.0.0.0/40' }));
    expect(e.variable).toBe('CAPTURE_LEDGER_CAPTURE_ALLOW');
    expect(e.message).toContain('"10.0.0.0/40"');
    expect(e.message).toContain('prefix length');
  });
  it('denies the stack own ports, derived from the settings, including SeaweedFS and OpenSearch neighbours', () => {
    const ports = loadConfig(env({ CAPTURE_LEDGER_S3_PORT: '9333', CAPTURE_LEDGER_OPENSEARCH_PORT: '9201', CAPTURE_LEDGER_API_PORT: '7171' })).capture
      .deniedPorts;
    for (const p of [55432, 7233, 8233, 8080, 8081, 9333, 9334, 9335, 9336, 19333, 19334, 19335, 19336, 8333, 9201, 9301, 7171, 7071, 7072, 8899])
      expect(ports, String(p)).toContain(p);
    expect(ports).not.toContain(80);
    expect(ports).not.toContain(443);
  });
});
