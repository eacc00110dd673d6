// Pure helpers of the picker, shared by the browser modules and (replayLink) the server side and
// tests: no DOM, no I/O.

/**
 * `${replayUrl}/?source=<encoded /wacz/<objectKey>?<signature>>`: the key with each path segment
 * percent-encoded, and the query (X-Amz-*) of the presigned URL the API signed for it. With the
 * archives it requires (their revisits point into them), replay's /collection/ of all those
 * sources (src/replay/source.ts).
 */
export function replayLink(replayUrl: string, objectKey: string, signedUrl: string, requires: readonly { objectKey: string; url: string }[] = []): string {
  const source = (key: string, signed: string): string => `/wacz/${key.split('/').map(encodeURIComponent).join('/')}${new URL(signed).search}`;
  const own = source(objectKey, signedUrl);
  const whole =
    requires.length === 0 ? own : `/collection/${[own, ...requires.map((r) => source(r.objectKey, r.url))].map(encodeURIComponent).join('/')}/collection.json`;
  return `${replayUrl.replace(/\/+$/, '')}/?source=${encodeURIComponent(whole)}`;
}

export function formatSize(n: number | null | undefined): string {
  if (n === null || n === undefined) return '';
  if (n < 1024) return `${n} B`;
  if (n < 1048576) return `${(n / 1024).toFixed(1)} KiB`;
  return `${(n / 1048576).toFixed(1)} MiB`;
}

export interface Segment {
  text: string;
  mark: boolean;
}

/** The query's words (2+ characters, case-insensitive) marked in `text`; the segments join back to `text`. */
export function highlight(text: string, query: string): Segment[] {
  const words = [
    ...new Set(
      query
        .toLowerCase()
        .split(/[\s"'()+\-|*~]+/)
        .filter((w) => w.length >= 2),
    ),
  ];
  if (words.length === 0 || text === '') return text === '' ? [] : [{ text, mark: false }];
  const escaped = words.sort((a, b) => b.length - a.length).map((w) => w.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'));
  const re = new RegExp(escaped.join('|'), 'gi');
  const out: Segment[] = [];
  let at = 0;
  for (const m of text.matchAll(re)) {
    if (m.index > at) out.push({ text: text.slice(at, m.index), mark: false });
    out.push({ text: m[0], mark: true });
    at = m.index + m[0].length;
  }
  if (at < text.length) out.push({ text: text.slice(at), mark: false });
  return out;
}

export interface GapSeries {
  host: string;
  gapsMs: readonly number[];
  owedMs: number;
}

export interface PlottedSeries {
  host: string;
  /** polyline points "x,y x,y …" of the gaps, in submit order */
  points: { x: number; y: number; gapMs: number; short: boolean }[];
  /** y of the owed delay line */
  owedY: number;
}

export interface ChartBox {
  width: number;
  height: number;
  pad: number;
}

/**
 * Gaps against the delay owed, one series per host, on a shared scale: x is the gap's position in
 * the host's submit order, y the gap (0 at the bottom, the largest gap or owed delay at the top).
 */
export function plotGaps(series: readonly GapSeries[], box: ChartBox): { max: number; series: PlottedSeries[] } {
  const max = Math.max(1, ...series.flatMap((s) => [s.owedMs, ...s.gapsMs]));
  const longest = Math.max(1, ...series.map((s) => s.gapsMs.length));
  const innerW = box.width - 2 * box.pad;
  const innerH = box.height - 2 * box.pad;
  const y = (ms: number): number => round(box.pad + innerH - (Math.max(0, ms) / max) * innerH);
  const x = (i: number): number => round(box.pad + (longest === 1 ? innerW / 2 : (i / (longest - 1)) * innerW));
  return {
    max,
    series: series.map((s) => ({
      host: s.host,
      owedY: y(s.owedMs),
      points: s.gapsMs.map((g, i) => ({ x: x(i), y: y(g), gapMs: g, short: g < s.owedMs })),
    })),
  };
}

const round = (n: number): number => Math.round(n * 10) / 10;
