// What the configuration refuses to leak or to allow: passwords inside URLs never reach a
// ConfigError's message, and the dev identity (which believes any caller's headers) only runs
// on an API bound to loopback.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ConfigError, isLoopbackHost, loadConfig, redactUrlPasswords } from './env.ts';
import { MINIMAL_ENV } from './env.fixture.ts';

const BASE = MINIMAL_ENV;

function refusal(overrides: Record<string, string | undefined>): ConfigError {
  try {
    loadConfig({ ...BASE, ...overrides });
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return err as ConfigError;
  }
  throw new Error('loadConfig accepted the environment');
}

describe('ConfigError hides passwords inside URLs', () => {
  it('a bad database URL is named without its password', () => {
    const err = refusal({ CAPTURE_LEDGER_DATABASE_URL: 'http://ledger:hunter2@db.internal:5432/capture_ledger' });
    expect(err.variable).toBe('CAPTURE_LEDGER_DATABASE_URL');
    expect(err.message).not.toContain('hunter2');
    expect(err.message).toContain('http://ledger:***@db.internal:5432/capture_ledger');
    expect(err.value).toBe('http://ledger:***@db.internal:5432/capture_ledger');
  });

  it('a password in a URL quoted in the reason is hidden too', () => {
    const err = refusal({ CAPTURE_LEDGER_CRAWL_WEBHOOK_URL: 'https://flow:s3cret@flow.internal/crawl', CAPTURE_LEDGER_CRAWL_WEBHOOK_TOKEN: undefined });
    expect(err.message).not.toContain('s3cret');
  });

  it('leaves URLs without a password, and text that is not a URL, as they are', () => {
    expect(redactUrlPasswords('postgres://user@h/db')).toBe('postgres://user@h/db');
    expect(redactUrlPasswords('http://h:8080/x')).toBe('http://h:8080/x');
    expect(redactUrlPasswords('a:b@c')).toBe('a:b@c');
    expect(redactUrlPasswords('x postgres://a:b@h/1 and redis://c:d@h/2')).toBe('x postgres://a:***@h/1 and redis://c:***@h/2');
  });

  it('never lets a password through, whatever it contains', () => {
    const password = fc.string({ minLength: 1, maxLength: 20 }).filter((p) => !/[@\s/"]/.test(p) && p !== '***');
    fc.assert(
      fc.property(password, fc.constantFrom('postgres', 'http', 'https'), (pw, scheme) => {
        const err = new ConfigError('V', `${scheme}://user:${pw}@host.example/db`, `cannot reach ${scheme}://user:${pw}@host.example/db`);
        expect(err.message.split(`:${pw}@`)).toHaveLength(1);
        expect(err.value).toBe(`${scheme}://user:***@host.example/db`);
      }),
    );
  });
});

describe('the dev identity needs an API bound to loopback', () => {
  it('is refused on 0.0.0.0, a LAN address or a host name, naming the variable and the host', () => {
    for (const host of ['0.0.0.0', '192.168.1.10', '::', 'api.example.com']) {
      const err = refusal({ CAPTURE_LEDGER_DEV_IDENTITY: '1', CAPTURE_LEDGER_API_HOST: host });
      expect(err.variable).toBe('CAPTURE_LEDGER_DEV_IDENTITY');
      expect(err.message).toContain(`CAPTURE_LEDGER_API_HOST=${host}`);
    }
  });

  it('runs on loopback, and JWT identity may bind anywhere', () => {
    for (const host of ['127.0.0.1', '127.0.0.5', '::1', '[::1]', 'localhost']) {
      expect(loadConfig({ ...BASE, CAPTURE_LEDGER_DEV_IDENTITY: '1', CAPTURE_LEDGER_API_HOST: host }).identity).toEqual({ mode: 'dev' });
    }
    expect(loadConfig({ ...BASE, CAPTURE_LEDGER_OIDC_ISSUER: 'https://issuer.example', CAPTURE_LEDGER_API_HOST: '0.0.0.0' }).identity.mode).toBe('oidc');
  });

  it('isLoopbackHost knows loopback from everything else', () => {
    expect(isLoopbackHost('127.255.0.1')).toBe(true);
    expect(isLoopbackHost('LOCALHOST')).toBe(true);
    expect(isLoopbackHost('127.0.0.1.example.com')).toBe(false);
    expect(isLoopbackHost('localhost.example.com')).toBe(false);
    expect(isLoopbackHost('128.0.0.1')).toBe(false);
    expect(isLoopbackHost('::ffff:7f00:1')).toBe(false);
  });
});
