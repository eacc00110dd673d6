// What the capture flow judges from a document's headers: whether it is HTML, and whether an
// X-Robots-Tag asks that it not be archived. Everything read from the page itself (title, text,
// links, the noarchive meta) comes from the rendered DOM (src/flow/browser/render.ts); no HTML is
// parsed here.

export function isHtml(contentType: string | undefined): boolean {
  const mime = (contentType ?? '').split(';')[0]!.trim().toLowerCase();
  return mime === 'text/html' || mime === 'application/xhtml+xml';
}

/** X-Robots-Tag: noarchive / none (optionally scoped to a user agent: "ua: noarchive"). */
export function headerNoArchive(values: string[], userAgent: string): boolean {
  for (const v of values) {
    let directives = v.toLowerCase();
    const m = /^\s*([a-z0-9_-]+)\s*:(.*)$/.exec(directives);
    if (
      m &&
      ![
        'noarchive',
        'none',
        'noindex',
        'nofollow',
        'all',
        'unavailable_after',
        'nosnippet',
        'max-snippet',
        'max-image-preview',
        'max-video-preview',
        'noimageindex',
        'notranslate',
        'indexifembedded',
      ].includes(m[1]!)
    ) {
      if (m[1] !== userAgent.toLowerCase()) continue;
      directives = m[2]!;
    }
    const parts = directives.split(',').map((s) => s.trim());
    if (parts.includes('noarchive') || parts.includes('none')) return true;
  }
  return false;
}
