// The sites the storage bench (dedup.ts) crawls: each host serves the same shared assets and its
// own pages. Deterministic: the same page count gives the same bytes.
//   assets  issue 26's site: small pages (about 5 KB of HTML) that each load the same 20 assets
//   docs    documentation-sized pages like the Rust book's (mdBook): 30–60 KB of HTML per page,
//           most of it the book's table of contents, which every page repeats, then the chapter's
//           prose and code; 20 shared files: stylesheets, scripts and woff2 fonts (already compressed)
import { deflateSync } from 'node:zlib';
import { pngChunk, ttfFont, type SitePage } from '../test/support/site.ts';
import { lcg } from './support-random.ts';

export type SiteProfile = 'assets' | 'docs';

export interface BenchSite {
  assets: Record<string, SitePage>;
  /** the HTML of page j of host number `host` */
  page(j: number, host: number): string;
}

/** Base-36 text from a pseudo-random sequence: it compresses about as little as minified scripts do. */
function noise(seed: number, bytes: number): string {
  const next = lcg(seed);
  let out = '';
  while (out.length < bytes) out += next().toString(36);
  return out.slice(0, bytes);
}

/** Bytes that do not compress at all, as a woff2 font's do not. */
function binaryNoise(seed: number, bytes: number): Buffer {
  const next = lcg(seed);
  const out = Buffer.alloc(bytes);
  for (let i = 0; i < bytes; i++) out[i] = next() >>> 24;
  return out;
}

const WORDS = (
  'the a of to and in is it that for you with as this are be on can by your we type value function ownership borrow reference ' +
  'struct enum trait lifetime compiler error module crate package cargo vector string slice iterator closure pattern match thread ' +
  'memory safety generic implementation method variable mutable immutable scope heap stack pointer smart box rc refcell test'
).split(' ');

/** English-like prose from a fixed vocabulary: compresses about as much as documentation text does. */
function prose(seed: number, bytes: number): string {
  const next = lcg(seed);
  const words: string[] = [];
  let n = 0;
  while (n < bytes) {
    const w = WORDS[next() % WORDS.length]!;
    words.push(w);
    n += w.length + 1;
  }
  return words.join(' ');
}

/** A valid PNG of noisy pixels, width × height RGB: as little compressible as a photo, so its size is about 3 × width × height. */
function photoPng(seed: number, width: number, height: number): Buffer {
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr[8] = 8; // bit depth
  ihdr[9] = 2; // truecolour
  const rows = Array.from({ length: height }, (_, y) => Buffer.concat([Buffer.from([0]), binaryNoise(seed * 10_000 + y, width * 3)]));
  const signature = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  return Buffer.concat([signature, pngChunk('IHDR', ihdr), pngChunk('IDAT', deflateSync(Buffer.concat(rows))), pngChunk('IEND', Buffer.alloc(0))]);
}

/** The images of issue 26's site: a logo, two illustrations and a banner, about 8, 16, 32 and 64 KB (photo-like, so they do not compress). */
const IMAGE_SIZES: [number, number][] = [
  [64, 42],
  [96, 56],
  [128, 84],
  [192, 112],
];

function tagFor(path: string): string {
  if (path.endsWith('.css')) return `<link rel="stylesheet" href="${path}">`;
  if (path.endsWith('.js')) return `<script src="${path}"></script>`;
  if (path.endsWith('.png')) return `<img src="${path}" alt="">`;
  return '';
}

/** Issue 26's site: 6 stylesheets (6–16 KB), 8 scripts (10–38 KB), 2 TrueType fonts (335 and 168 KB),
 * 4 images (8–64 KB); pages of about 5 KB. The images were 100-byte single-colour PNGs at first,
 * smaller than any a site serves (and than DEDUP_LIMITS.minPayloadBytes, so stored on every page);
 * the rest is kept as it was measured first, so page j is the same on every host (its payload is
 * stored once, too). */
function assetsSite(): BenchSite {
  const assets: Record<string, SitePage> = {};
  for (let i = 0; i < 6; i++)
    assets[`/assets/s${i}.css`] = {
      contentType: 'text/css',
      body: `.c${i}{color:#${(i * 37).toString(16).padStart(3, '0')}}/*${noise(i, 6_000 + i * 2_000)}*/`,
    };
  for (let i = 0; i < 8; i++)
    assets[`/assets/a${i}.js`] = { contentType: 'text/javascript', body: `var v${i}=${JSON.stringify(noise(100 + i, 10_000 + i * 4_000))};` };
  const font = ttfFont();
  assets['/assets/f0.ttf'] = { contentType: 'font/ttf', body: font };
  assets['/assets/f1.ttf'] = { contentType: 'font/ttf', body: font.subarray(0, Math.floor(font.length / 2)) };
  IMAGE_SIZES.forEach(([w, h], i) => (assets[`/assets/i${i}.png`] = { contentType: 'image/png', body: photoPng(i, w, h) }));
  const head = Object.keys(assets).map(tagFor).join('');
  const fonts = `<style>@font-face{font-family:F0;src:url(/assets/f0.ttf)}@font-face{font-family:F1;src:url(/assets/f1.ttf)}h1{font-family:F0}p{font-family:F1}</style>`;
  return { assets, page: (j) => `<!doctype html><title>page ${j}</title>${fonts}${head}<h1>Page ${j}</h1><p>${noise(10_000 + j, 4_000)}</p>` };
}

const CSS_RULE = (i: number): string => `.sidebar .chapter li.part-${i} a{color:var(--sidebar-fg);padding:0 ${i % 7}px;text-decoration:none}\n`;
const CODE = (i: number): string => `fn main() {\n    let v${i}: Vec<i32> = Vec::new();\n    println!("{:?}", v${i});\n}\n`;

/** mdBook's shared files, at about the Rust book's sizes. */
function docsAssets(): Record<string, SitePage> {
  const css = (n: number, kb: number): SitePage => ({
    contentType: 'text/css',
    body: Array.from({ length: Math.ceil((kb * 1024) / 90) }, (_, i) => CSS_RULE(n * 1000 + i)).join(''),
  });
  const js = (n: number, kb: number): SitePage => ({
    contentType: 'text/javascript',
    body: `(function(){var d=${JSON.stringify(noise(500 + n, kb * 1024))};})();`,
  });
  const woff2 = (n: number, kb: number): SitePage => ({ contentType: 'font/woff2', body: binaryNoise(900 + n, kb * 1024) });
  return {
    '/css/variables.css': css(0, 8),
    '/css/general.css': css(1, 5),
    '/css/chrome.css': css(2, 12),
    '/css/print.css': css(3, 2),
    '/FontAwesome/css/font-awesome.css': css(4, 30),
    '/fonts/fonts.css': {
      contentType: 'text/css',
      body:
        [0, 1, 2, 3].map((i) => `@font-face{font-family:Doc${i};src:url(/fonts/f${i}.woff2) format("woff2")}`).join('') +
        'body{font-family:Doc0}h1{font-family:Doc1}code{font-family:Doc2}em{font-family:Doc3}',
    },
    '/highlight.css': css(5, 3),
    '/tomorrow-night.css': css(6, 2),
    '/ayu-highlight.css': css(7, 2),
    '/book.js': js(0, 25),
    '/clipboard.min.js': js(1, 10),
    '/highlight.js': js(2, 50),
    '/elasticlunr.min.js': js(3, 30),
    '/mark.min.js': js(4, 15),
    '/searcher.js': js(5, 16),
    '/toc.js': js(6, 12),
    '/fonts/f0.woff2': woff2(0, 40),
    '/fonts/f1.woff2': woff2(1, 38),
    '/fonts/f2.woff2': woff2(2, 36),
    '/fonts/f3.woff2': woff2(3, 42),
  };
}

/** The book's table of contents (the same on every page): about 22 KB of nested links. */
function toc(): string {
  const items: string[] = [];
  for (let c = 1; c <= 20; c++)
    for (let s = 0; s <= 8; s++)
      items.push(`<li class="chapter-item"><a href="ch${c}-${s}.html"><strong>${c}.${s}.</strong> ${prose(c * 100 + s, 40)}</a></li>`);
  return `<nav class="sidebar"><ol class="chapter">${items.join('')}</ol></nav>`;
}

/** Documentation pages of 30–60 KB: the contents, then prose and code whose length varies by page.
 * Each host is its own book: its chapters' prose is its own, only the shared files repeat. */
function docsSite(): BenchSite {
  const assets = docsAssets();
  const head = Object.keys(assets).map(tagFor).join('');
  const nav = toc();
  const page = (j: number, host: number): string => {
    const body = (8 + ((j * 7) % 30)) * 1024;
    const seed = 20_000 + host * 1_000_000 + j * 100;
    const parts: string[] = [];
    for (let n = 0; parts.join('').length < body; n++)
      parts.push(`<p>${prose(seed + n, 700)}</p><pre><code class="language-rust">${CODE(j * 100 + n)}</code></pre>`);
    return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Chapter ${j} - Book ${host + 1}</title>${head}</head><body>${nav}<main><h1>Chapter ${j}</h1>${parts.join('')}</main></body></html>`;
  };
  return { assets, page };
}

export function benchSite(profile: SiteProfile): BenchSite {
  return profile === 'assets' ? assetsSite() : docsSite();
}
