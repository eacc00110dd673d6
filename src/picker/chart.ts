// The pacing audit drawn: per host, each gap from one capture's finish to the next submit (dots on
// a line) against the delay the host was owed (dashed), in inline SVG. A gap below its dashed line
// was shorter than owed and is drawn as a larger red dot.
import { plotGaps, type GapSeries } from './format.js';

const NS = 'http://www.w3.org/2000/svg';
const BOX = { width: 640, height: 200, pad: 24 };
const COLOURS = ['#1f77b4', '#d62728', '#2ca02c', '#9467bd', '#ff7f0e', '#17becf', '#8c564b', '#e377c2'];

function svg<K extends keyof SVGElementTagNameMap>(tag: K, attrs: Record<string, string | number>, text?: string): SVGElementTagNameMap[K] {
  const e = document.createElementNS(NS, tag);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, String(v));
  if (text !== undefined) e.textContent = text;
  return e;
}

/** The chart for these hosts' gaps, with a legend; an empty <svg> when no host has a gap yet. */
export function pacingChart(series: readonly GapSeries[]): SVGSVGElement {
  const root = svg('svg', {
    id: 'pacing-chart',
    viewBox: `0 0 ${BOX.width} ${BOX.height + 20 * series.length}`,
    role: 'img',
    'aria-labelledby': 'pacing-chart-title',
  });
  root.append(svg('title', { id: 'pacing-chart-title' }, 'Gaps between captures per host, against the delay each host was owed'));
  const plotted = plotGaps(series, BOX);
  root.append(
    svg('line', { x1: BOX.pad, y1: BOX.height - BOX.pad, x2: BOX.width - BOX.pad, y2: BOX.height - BOX.pad, class: 'axis' }),
    svg('text', { x: 2, y: BOX.pad - 8, class: 'tick' }, `${plotted.max} ms`),
    svg('text', { x: 2, y: BOX.height - BOX.pad + 14, class: 'tick' }, '0'),
  );
  plotted.series.forEach((s, i) => {
    const owed = series[i]?.owedMs ?? 0;
    const colour = COLOURS[i % COLOURS.length]!;
    const g = svg('g', { class: 'series', 'data-host': s.host, stroke: colour, fill: colour });
    g.append(svg('line', { x1: BOX.pad, y1: s.owedY, x2: BOX.width - BOX.pad, y2: s.owedY, class: 'owed', 'stroke-dasharray': '4 3' }));
    if (s.points.length > 1) g.append(svg('polyline', { points: s.points.map((p) => `${p.x},${p.y}`).join(' '), fill: 'none', class: 'gaps' }));
    for (const p of s.points) {
      const dot = svg('circle', { cx: p.x, cy: p.y, r: p.short ? 4 : 2.5, class: p.short ? 'short' : 'gap' });
      dot.append(svg('title', {}, `${s.host}: ${p.gapMs} ms`));
      g.append(dot);
    }
    const y = BOX.height + 14 + 20 * i;
    g.append(
      svg('rect', { x: BOX.pad, y: y - 9, width: 10, height: 10 }),
      svg(
        'text',
        { x: BOX.pad + 16, y, class: 'legend', stroke: 'none', fill: '#222' },
        `${s.host}: ${s.points.length} gap${s.points.length === 1 ? '' : 's'}, owed ${owed} ms (dashed)`,
      ),
    );
    root.append(g);
  });
  return root;
}
