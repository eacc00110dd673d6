import { describe, expect, it } from 'vitest';
import type { HttpExchange } from '../../domain/wacz/warc.ts';
import { fulfilHeaders, outgoingHeaders, redirectedRequest, redirectTarget } from './recorder.ts';

function exchange(status: number, headers: [string, string][], url = 'http://a.test/dir/page'): HttpExchange {
  return {
    url,
    date: new Date(0),
    request: { method: 'GET', target: '/', httpVersion: '1.1', headers: [] },
    response: { status, statusText: '', httpVersion: '1.1', headers, body: Buffer.alloc(0) },
  };
}

describe('outgoingHeaders', () => {
  it('drops pseudo and hop-by-hop headers and asks for no content-coding', () => {
    const asked: [string, string][] = [
      [':authority', 'a.test'],
      ['Host', 'a.test'],
      ['Accept-Encoding', 'gzip, br'],
      ['Connection', 'keep-alive'],
      ['User-Agent', 'ua'],
      ['Cookie', 'a=1'],
    ];
    const out = outgoingHeaders(asked.map(([name, value]) => ({ name, value })));
    expect(out).toEqual([
      ['User-Agent', 'ua'],
      ['Cookie', 'a=1'],
      ['Accept-Encoding', 'identity'],
    ]);
  });
});

describe('fulfilHeaders', () => {
  it('joins repeated names, Set-Cookie by newline, and drops framing headers', () => {
    expect(
      fulfilHeaders([
        ['Set-Cookie', 'a=1'],
        ['set-cookie', 'b=2'],
        ['Vary', 'Accept'],
        ['Vary', 'Cookie'],
        ['Transfer-Encoding', 'chunked'],
        ['Content-Type', 'text/css'],
      ]),
    ).toEqual({ 'set-cookie': 'a=1\nb=2', vary: 'Accept, Cookie', 'content-type': 'text/css' });
  });
});

describe('redirectTarget', () => {
  it('resolves Location against the hop, drops the fragment', () => {
    expect(redirectTarget(exchange(302, [['Location', '../x?q=1#frag']]))).toBe('http://a.test/x?q=1');
    expect(redirectTarget(exchange(301, [['location', 'https://b.test/']]))).toBe('https://b.test/');
  });
  it('is undefined for non-redirects, a missing or non-http Location', () => {
    expect(redirectTarget(exchange(200, [['Location', '/x']]))).toBeUndefined();
    expect(redirectTarget(exchange(304, [['Location', '/x']]))).toBeUndefined();
    expect(redirectTarget(exchange(302, []))).toBeUndefined();
    expect(redirectTarget(exchange(302, [['Location', 'javascript:alert(1)']]))).toBeUndefined();
    expect(redirectTarget(exchange(302, [['Location', 'http://[bad']]))).toBeUndefined();
  });
});

describe('redirectedRequest', () => {
  const post = {
    url: 'http://a.test/form',
    method: 'POST',
    headers: [
      ['Content-Type', 'application/x-www-form-urlencoded'],
      ['Cookie', 'c=1'],
    ] as [string, string][],
    body: Buffer.from('a=1'),
  };
  it('303/302/301 turn a POST into a GET without body or its content headers', () => {
    for (const status of [301, 302, 303])
      expect(redirectedRequest(post, status, 'http://a.test/done')).toEqual({ url: 'http://a.test/done', method: 'GET', headers: [['Cookie', 'c=1']] });
  });
  it('307/308 repeat the request as it was', () => {
    for (const status of [307, 308]) expect(redirectedRequest(post, status, 'http://a.test/again')).toEqual({ ...post, url: 'http://a.test/again' });
  });
});
