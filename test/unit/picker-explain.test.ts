// The picker's words for each failed answer, under each identity mode.
import { afterEach, describe, expect, it } from 'vitest';
import { explain, setMode } from '../../src/picker/api.ts';

const failed = (status: number, body: Record<string, unknown> = {}, message?: string) =>
  ({ ok: false, status, body, headers: null, ...(message !== undefined ? { message } : {}) }) as const;

afterEach(() => setMode('none'));

describe('explain', () => {
  it('says what each status means, naming what was asked for', () => {
    expect(explain(failed(0, {}, 'fetch failed'))).toBe('The API did not answer (fetch failed). Is it running?');
    expect(explain(failed(0))).toBe('The API did not answer (network error). Is it running?');
    expect(explain(failed(400, { details: [{ field: 'q', message: 'is required' }] }))).toBe('The API refused the request (400): q is required.');
    expect(explain(failed(400, { error: 'invalid request' }))).toBe('The API refused the request (400): invalid request.');
    expect(explain(failed(400, { details: [] }))).toBe('The API refused the request (400): bad request.');
    expect(explain(failed(403, { error: 'not yours' }))).toBe('Not allowed (403): not yours.');
    expect(explain(failed(403))).toBe('Not allowed (403): you may not do this.');
    expect(explain(failed(404), 'the crawl')).toBe('Not found (404): the crawl does not exist, or you may not see it.');
    expect(explain(failed(404))).toBe('Not found (404): it does not exist, or you may not see it.');
    expect(explain(failed(429))).toBe('Too many requests (429): wait a moment and try again.');
    expect(explain(failed(503, { error: 'OpenFGA' }))).toBe('A service the API depends on is unavailable (503): OpenFGA. Try again in a moment.');
    expect(explain(failed(503))).toBe('A service the API depends on is unavailable (503). Try again in a moment.');
    expect(explain(failed(500, { error: 'boom' }))).toBe('Error 500: boom.');
    expect(explain(failed(502))).toBe('Error 502: the API could not answer.');
  });

  it('asks for a fresh token under JWT identity, and for a name otherwise', () => {
    setMode('oidc');
    expect(explain(failed(401))).toMatch(/^Not accepted \(401\): the token has expired/);
    setMode('dev');
    expect(explain(failed(401))).toBe('Not accepted (401): give a subject name.');
  });
});
