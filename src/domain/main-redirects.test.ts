import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { mainRedirectRefusal, visitedKey } from './main-redirects.ts';

describe('visitedKey', () => {
  it('drops the fragment and nothing else', () => {
    expect(visitedKey('https://a.test/p?q=1#top')).toBe('https://a.test/p?q=1');
    expect(visitedKey('https://a.test/p')).toBe('https://a.test/p');
    expect(visitedKey('https://a.test/#a#b')).toBe('https://a.test/');
  });
});

describe('mainRedirectRefusal', () => {
  it('refuses a loop and a redirect past the limit, follows anything else', () => {
    const visited = new Set(['https://a.test/', 'https://a.test/b']);
    expect(mainRedirectRefusal(visited, 'https://a.test/', 10)).toBe('net::ERR_TOO_MANY_REDIRECTS: redirect loop at https://a.test/');
    expect(mainRedirectRefusal(visited, 'https://a.test/c', 10)).toBeUndefined();
    expect(mainRedirectRefusal(visited, 'https://a.test/c', 1)).toBe('net::ERR_TOO_MANY_REDIRECTS: more than 1 redirects');
  });

  it('follows every new URL while the visits are within the limit, refuses every visited one', () => {
    fc.assert(
      fc.property(fc.uniqueArray(fc.webUrl(), { minLength: 1, maxLength: 15 }), fc.webUrl(), fc.integer({ min: 0, max: 20 }), (urls, next, max) => {
        const visited = new Set(urls);
        const refusal = mainRedirectRefusal(visited, next, max);
        if (visited.has(next)) expect(refusal).toMatch(/redirect loop/);
        else if (visited.size > max) expect(refusal).toMatch(/more than/);
        else expect(refusal).toBeUndefined();
        expect(mainRedirectRefusal(visited, urls[0]!, max)).toMatch(/redirect loop/);
      }),
    );
  });
});
