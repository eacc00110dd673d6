// The main document's redirects, as a capture follows them one navigation at a time: which it
// refuses to follow, in the words Chromium uses for the same refusal.

/** The URL a navigation is counted under: fragment dropped (a redirect to it is the same document). */
export function visitedKey(url: string): string {
  return url.split('#')[0]!;
}

/** Why a redirect to `next` is not followed: back to a URL already visited (a loop), or past `maxRedirects`; undefined when it is followed. */
export function mainRedirectRefusal(visited: ReadonlySet<string>, next: string, maxRedirects: number): string | undefined {
  if (visited.has(next)) return `net::ERR_TOO_MANY_REDIRECTS: redirect loop at ${next}`;
  if (visited.size > maxRedirects) return `net::ERR_TOO_MANY_REDIRECTS: more than ${maxRedirects} redirects`;
  return undefined;
}
