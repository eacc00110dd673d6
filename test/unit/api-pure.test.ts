import { describe, expect, it } from 'vitest';
import { pathPattern, RouteMethods, validationDetails } from '../../src/api/error-handler.ts';
import { replayLink } from '../../src/api/picker.ts';
import { Nullable, RuleActionSchema } from '../../src/api/schemas/common.ts';
import { UUID_PATTERN } from '../../src/domain/uuid.ts';
import Type from 'typebox';
import { grantDuration, parseShareDuration, shareSubject, ShareUsageError } from '../../src/cli/fga-share.ts';

describe('Nullable', () => {
  it('adds null to the type (and to an enum), keeping every other keyword', () => {
    expect(JSON.parse(JSON.stringify(Nullable(Type.String({ format: 'date-time' }))))).toEqual({ type: ['string', 'null'], format: 'date-time' });
    expect(JSON.parse(JSON.stringify(Nullable(RuleActionSchema)))).toEqual({ type: ['string', 'null'], enum: ['follow', 'capture', 'skip', null] });
  });
});

describe('RouteMethods (405 or 404)', () => {
  it('matches a parameter to one path segment only, and literal parts literally', () => {
    expect(pathPattern('/api/crawls/:id').test('/api/crawls/abc')).toBe(true);
    expect(pathPattern('/api/crawls/:id').test('/api/crawls/abc/decisions')).toBe(false);
    expect(pathPattern('/api/crawls/:id').test('/api/crawls/')).toBe(false);
    expect(pathPattern('/a.b').test('/aXb')).toBe(false);
    expect(pathPattern('/assets/*').test('/assets/x/y.js')).toBe(true);
  });
  it('collects every method served at a path, sorted; none for an unknown path', () => {
    const routes = new RouteMethods();
    routes.add('/api/crawls', 'post');
    routes.add('/api/crawls', ['GET', 'HEAD']);
    routes.add('/api/crawls/:id', 'GET');
    routes.add('/api/crawls/:id/levels/:depth', 'POST');
    expect(routes.allowed('/api/crawls')).toEqual(['GET', 'HEAD', 'POST']);
    expect(routes.allowed('/api/crawls/x')).toEqual(['GET']);
    expect(routes.allowed('/api/crawls/x/levels/2')).toEqual(['POST']);
    expect(routes.allowed('/api/nothing')).toEqual([]);
  });
});

describe('validationDetails', () => {
  it('names the field for type, required and additionalProperties errors', () => {
    expect(
      validationDetails(
        [
          { keyword: 'type', instancePath: '/maxDepth', schemaPath: '', params: { type: 'integer' }, message: 'must be integer' },
          { keyword: 'required', instancePath: '', schemaPath: '', params: { missingProperty: 'seeds' }, message: "must have required property 'seeds'" },
          {
            keyword: 'additionalProperties',
            instancePath: '/rules/0',
            schemaPath: '',
            params: { additionalProperty: 'extra' },
            message: 'must NOT have additional properties',
          },
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
    expect(
      validationDetails(
        [{ keyword: 'pattern', instancePath: '/id', schemaPath: '', params: { pattern: UUID_PATTERN }, message: 'must match pattern' }],
        'params',
      ),
    ).toEqual([{ field: 'params.id', message: 'must be a UUID' }]);
    expect(
      validationDetails([{ keyword: 'format', instancePath: '/before', schemaPath: '', params: { format: 'date-time' }, message: 'x' }], 'querystring')[0]!
        .message,
    ).toContain('ISO 8601');
  });
});

describe('picker', () => {
  it('links replay with the object key, path segments encoded, and the signature of the presigned URL', () => {
    const signed = 'http://s3:8333/captures/crawls/abc/page.wacz?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Signature=ab12';
    const link = replayLink('http://127.0.0.1:8899', 'crawls/abc/page.wacz', signed);
    expect(link).toBe(
      `http://127.0.0.1:8899/?source=${encodeURIComponent('/wacz/crawls/abc/page.wacz?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Signature=ab12')}`,
    );
    expect(new URL(link).searchParams.get('source')).toBe('/wacz/crawls/abc/page.wacz?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Signature=ab12');
    const odd = new URL(replayLink('http://127.0.0.1:8899/', 'a b/c&d+e.wacz', 'http://s3/x?X-Amz-Signature=1'));
    expect(odd.searchParams.get('source')).toBe('/wacz/a%20b/c%26d%2Be.wacz?X-Amz-Signature=1');
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
