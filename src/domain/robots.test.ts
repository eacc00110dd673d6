import { describe, expect, it } from 'vitest';
import { MAX_CRAWL_DELAY_MS, robotsFrom, robotsUrl } from './robots.ts';

const page = 'http://127.0.0.2:4000/a/b?c=1';

describe('robots', () => {
  it('lives at the origin root, port kept', () => {
    expect(robotsUrl(page)).toBe('http://127.0.0.2:4000/robots.txt');
    expect(robotsUrl('https://example.com/x')).toBe('https://example.com/robots.txt');
  });
  it('applies Disallow and Allow for * and for our own agent group', () => {
    const r = robotsFrom({ kind: 'ok', body: 'User-agent: *\nDisallow: /private\nAllow: /private/ok\n' }, page);
    expect(r.isAllowed('http://127.0.0.2:4000/private')).toBe(false);
    expect(r.isAllowed('http://127.0.0.2:4000/private/x')).toBe(false);
    expect(r.isAllowed('http://127.0.0.2:4000/private/ok')).toBe(true);
    expect(r.isAllowed('http://127.0.0.2:4000/public')).toBe(true);
    const own = robotsFrom({ kind: 'ok', body: 'User-agent: capture-ledger-flow\nDisallow: /\n\nUser-agent: *\nDisallow:\n' }, page);
    expect(own.isAllowed('http://127.0.0.2:4000/anything')).toBe(false);
  });
  it('reads Crawl-delay in ms (fractions too), none when absent', () => {
    expect(robotsFrom({ kind: 'ok', body: 'User-agent: *\nCrawl-delay: 3\n' }, page).crawlDelayMs).toBe(3000);
    expect(robotsFrom({ kind: 'ok', body: 'User-agent: *\nCrawl-delay: 0.25\n' }, page).crawlDelayMs).toBe(250);
    expect(robotsFrom({ kind: 'ok', body: 'User-agent: *\nDisallow: /x\n' }, page).crawlDelayMs).toBeUndefined();
  });
  it('a 4xx robots.txt allows everything; a 5xx or unreachable one disallows everything', () => {
    expect(robotsFrom({ kind: 'unavailable', status: 404 }, page).isAllowed(page)).toBe(true);
    const down = robotsFrom({ kind: 'unreachable', status: 503, reason: 'robots.txt answered 503' }, page);
    expect(down.isAllowed(page)).toBe(false);
    expect(down.disallowAll).toBe('robots.txt answered 503');
  });
  it('never allows a URL on another origin by these rules', () => {
    expect(robotsFrom({ kind: 'ok', body: '' }, page).isAllowed('http://127.0.0.3:4000/')).toBe(false);
  });
  it('caps Crawl-delay at a day, below the 2^31-1 ms Node timers take, whatever robots.txt says', () => {
    expect(robotsFrom({ kind: 'ok', body: 'User-agent: *\nCrawl-delay: 86400\n' }, page).crawlDelayMs).toBe(MAX_CRAWL_DELAY_MS);
    expect(robotsFrom({ kind: 'ok', body: 'User-agent: *\nCrawl-delay: 1e12\n' }, page).crawlDelayMs).toBe(MAX_CRAWL_DELAY_MS);
    expect(MAX_CRAWL_DELAY_MS).toBeLessThan(2 ** 31 - 1);
  });
  it('a refused robots.txt host leaves the page to its own (refused) fetch rather than a robots skip', () => {
    const r = robotsFrom({ kind: 'refused', reason: 'address refused: loopback' }, page);
    expect(r.isAllowed(page)).toBe(true);
    expect(r.refused).toBe('address refused: loopback');
    expect(r.disallowAll).toBeUndefined();
  });
});
