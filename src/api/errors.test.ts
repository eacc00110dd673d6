import { describe, expect, it } from 'vitest';
import {
  BadRequestError,
  ConflictError,
  DomainError,
  ForbiddenError,
  MethodNotAllowedError,
  NotFoundError,
  ServiceUnavailableError,
  UnauthenticatedError,
} from './errors.ts';

describe('errors that are answers', () => {
  const cases: [DomainError, string, number, Record<string, unknown>, Record<string, string>][] = [
    [new BadRequestError('bad seed', { seeds: ['x'] }), 'BadRequestError', 400, { seeds: ['x'], error: 'bad seed' }, {}],
    [new UnauthenticatedError('expired token'), 'UnauthenticatedError', 401, { error: 'unauthenticated' }, {}],
    [
      new UnauthenticatedError('no org', 'token names no organization'),
      'UnauthenticatedError',
      401,
      { error: 'unauthenticated', detail: 'token names no organization' },
      {},
    ],
    [new ForbiddenError('capability refused'), 'ForbiddenError', 403, { error: 'capability refused' }, {}],
    [new NotFoundError('archive 1 is hidden'), 'NotFoundError', 404, { error: 'not found' }, {}],
    [new MethodNotAllowedError(['GET', 'HEAD']), 'MethodNotAllowedError', 405, { error: 'method not allowed', allow: ['GET', 'HEAD'] }, { allow: 'GET, HEAD' }],
    [new ConflictError('crawl running', { crawlId: 'c' }), 'ConflictError', 409, { crawlId: 'c', error: 'crawl running' }, {}],
    [
      new ServiceUnavailableError('authorization unavailable', 'openfga: ECONNREFUSED'),
      'ServiceUnavailableError',
      503,
      { error: 'authorization unavailable' },
      {},
    ],
  ];

  it.each(cases)('%o is named by its class and answers its status, body and headers', (err, name, status, body, headers) => {
    expect(err).toBeInstanceOf(DomainError);
    expect(err).toBeInstanceOf(Error);
    expect(err.name).toBe(name);
    expect(err.status).toBe(status);
    expect(err.body()).toEqual(body);
    expect(err.headers()).toEqual(headers);
    expect(String(err)).toMatch(new RegExp(`^${name}: `));
  });

  it('a detail key named error cannot override the message the caller is told', () => {
    expect(new BadRequestError('the real reason', { error: 'spoofed' }).body()).toEqual({ error: 'the real reason' });
  });

  it('the log keeps what the caller is not told', () => {
    const cause = new Error('ECONNREFUSED 127.0.0.1:8080');
    const err = new ServiceUnavailableError('authorization unavailable', 'openfga check failed', { cause });
    expect(err.message).toBe('openfga check failed');
    expect(err.cause).toBe(cause);
    expect(JSON.stringify(err.body())).not.toContain('ECONNREFUSED');
    expect(new UnauthenticatedError('signature mismatch').reason).toBe('signature mismatch');
    expect(new NotFoundError('archive a1 not viewable').message).toBe('archive a1 not viewable');
  });
});
