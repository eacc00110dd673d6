// The Crawls view: the crawl list (GET /api/crawls; "More" continues with before + beforeId) and
// one crawl's page: its state and stopReason (GET /api/crawls/:id), each level's counts and the
// hosts in flight (GET …/progress), polled while it runs; the pacing audit as a chart per host
// (GET …/pacing) and what the rules decided, rule × host × action (GET …/decisions).
import type { CrawlCounts } from '../domain/crawl-counts.js';
import { call, explain, setStatus, type Answer } from './api.js';
import { pacingChart } from './chart.js';
import { action, byId, el, fill, row, tbody, time } from './dom.js';
import { PAGE } from './archives.js';

interface Crawl extends CrawlCounts {
  id: string;
  orgId: string;
  state: string;
  stopReason: string | null;
  failure: string | null;
  startedAt: string;
  finishedAt: string | null;
  seeds: string[];
  maxDepth: number;
  depthReached: number;
}

interface Level {
  depth: number;
  pages: number;
  dispatched: number | null;
  captured: number;
  failed: number;
  skipped: number;
  pending: number;
  cut: number;
  heartbeat: { pagesDone: number; pagesTotal: number; pagesInFlight: number } | null;
}

interface Progress {
  source: 'workflow' | 'ledger';
  phase: string | null;
  depth: number | null;
  levels: Level[];
  hosts: { host: string; queued: number; inFlight: number; nextAllowedAt?: string | null }[];
}

interface Pacing {
  violations: number;
  hosts: { host: string; pages: number; minGapMs: number | null; effectiveDelayMs: number; violations: number; gapsMs?: number[] }[];
}

interface Decisions {
  decisions: { depth: number; rule: number; action: string; hostname: string; links: number; samples: string[] }[];
  robots: { hostname: string; pages: number }[];
}

let pollMs = 2000;
let last: Crawl | null = null;
let shown: string | null = null;
let timer: ReturnType<typeof setTimeout> | null = null;

export function setPollMs(ms: number): void {
  pollMs = ms;
}

export function stopPolling(): void {
  if (timer !== null) clearTimeout(timer);
  timer = null;
}

const crawlPath = (id: string, tail = ''): string => `/api/crawls/${encodeURIComponent(id)}${tail}`;

function crawlRow(c: Crawl): HTMLTableRowElement {
  const tr = row([null, c.orgId, c.state, c.stopReason ?? '', c.seeds.join(' '), c.waczCount], 'crawl');
  tr.dataset.id = c.id;
  tr.children[0]!.append(time(c.startedAt));
  tr.children[2]!.className = `state-${c.state}`;
  tr.children[4]!.className = 'url';
  // the narrow layout shows each cell as a card line, named
  ['Started', 'Organization', 'State', 'Stop reason', 'Seeds', 'WACZ'].forEach((label, i) => ((tr.children[i] as HTMLElement).dataset.label = label));
  tr.append(el('td', {}, [action('details', 'show', `#crawl-${c.id}`, () => void showCrawl(c.id))]));
  return tr;
}

export async function loadCrawls(append: boolean): Promise<void> {
  const body = tbody('crawls');
  const more = byId<HTMLButtonElement>('crawls-more');
  if (!append) {
    body.replaceChildren();
    last = null;
    byId('crawl-detail').hidden = true;
    stopPolling();
  }
  more.hidden = true;
  setStatus('Loading crawls…');
  const q = new URLSearchParams({ limit: String(PAGE) });
  if (append && last) {
    q.set('before', last.startedAt);
    q.set('beforeId', last.id);
  }
  const r = await call<Crawl[]>(`/api/crawls?${q}`);
  if (!r.ok) {
    setStatus(explain(r, 'the crawl list'), true);
    return;
  }
  body.append(...r.body.map(crawlRow));
  const n = body.children.length;
  setStatus(n === 0 ? 'No crawls you may see (the list needs can_submit on your first organization).' : `${n} crawl${n === 1 ? '' : 's'} shown.`);
  if (r.body.length === PAGE) {
    last = r.body[r.body.length - 1] ?? null;
    more.hidden = false;
  }
}

function summary(c: Crawl): void {
  const items: [string, string | number][] = [
    ['State', c.state],
    ['Stop reason', c.stopReason || '—'],
    ['Failure', c.failure || '—'],
    ['Started', c.startedAt],
    ['Finished', c.finishedAt || '—'],
    ['Seeds', c.seeds.join(' ')],
    ['Depth reached', `${c.depthReached} of ${c.maxDepth}`],
    ['Pages discovered', c.pagesDiscovered],
    ['Captured', c.pagesCaptured],
    ['Failed', c.pagesFailed],
    ['Skipped', c.pagesSkipped],
    ['Pending', c.pagesPending],
    ['WACZ', c.waczCount],
  ];
  byId('crawl-summary').replaceChildren(
    ...items.flatMap(([k, v]) => [
      el('dt', { text: k }),
      el('dd', { text: String(v), dataset: { field: k }, ...(k === 'State' ? { className: `state-${v}` } : {}) }),
    ]),
  );
  byId('crawl-title').textContent = `Crawl ${c.id}`;
  // the crawl's row in the list above follows what its page shows
  const listed = document.querySelector<HTMLTableRowElement>(`#crawls tr.crawl[data-id="${CSS.escape(c.id)}"]`);
  if (listed) listed.replaceWith(crawlRow(c));
}

function progress(p: Progress): void {
  byId('progress-note').textContent =
    `${p.source === 'workflow' ? 'live' : 'from the ledger'}${p.phase ? `, ${p.phase}` : ''}${p.depth !== null ? `, depth ${p.depth}` : ''}`;
  const flow = (l: Level): string => (l.heartbeat ? `${l.heartbeat.pagesDone} of ${l.heartbeat.pagesTotal} done, ${l.heartbeat.pagesInFlight} in flight` : '');
  fill(
    'progress-levels',
    p.levels.map((l) => row([l.depth, l.pages, l.dispatched, l.captured, l.failed, l.skipped, l.pending, l.cut, flow(l)], 'level')),
  );
  const hosts = p.hosts.map((h) => {
    const tr = row([h.host, h.queued, h.inFlight, null], 'host');
    tr.children[3]!.append(time(h.nextAllowedAt ?? null));
    if (h.inFlight > 0) tr.classList.add('in-flight');
    return tr;
  });
  fill('progress-hosts', hosts);
  byId('hosts-note').textContent =
    p.hosts.length === 0 ? 'no level in flight' : `${p.hosts.filter((h) => h.inFlight > 0).length} capturing now, of ${p.hosts.length}`;
}

function pacing(a: Pacing): void {
  byId('pacing-note').textContent =
    a.violations === 0 ? 'no host was visited sooner than it was owed' : `${a.violations} gap${a.violations === 1 ? '' : 's'} shorter than owed`;
  fill(
    'pacing',
    a.hosts.map((h) => row([h.host, h.pages, h.minGapMs === null ? '' : `${h.minGapMs} ms`, `${h.effectiveDelayMs} ms`, h.violations], 'pacing-host')),
  );
  byId('pacing-chart-slot').replaceChildren(pacingChart(a.hosts.map((h) => ({ host: h.host, gapsMs: h.gapsMs ?? [], owedMs: h.effectiveDelayMs }))));
}

function decisions(d: Decisions): void {
  fill(
    'decisions',
    d.decisions.map((x) => row([x.depth, x.rule, x.action, x.hostname, x.links, x.samples.join(' ')], 'decision')),
  );
  byId('robots').textContent = d.robots.length === 0 ? '' : `robots.txt kept out: ${d.robots.map((r) => `${r.hostname} (${r.pages})`).join(', ')}`;
}

function unavailable(noteId: string, a: Answer<unknown>): void {
  if (!a.ok) byId(noteId).textContent = `unavailable: ${explain(a)}`;
}

/** One crawl: everything once, then the summary, progress and pacing again every pollMs while it runs. */
export async function showCrawl(id: string, focus = true): Promise<void> {
  stopPolling();
  shown = id;
  const detail = byId('crawl-detail');
  detail.hidden = false;
  setStatus(`Loading crawl ${id}…`);
  const [c, p, a, d] = await Promise.all([
    call<Crawl>(crawlPath(id)),
    call<Progress>(crawlPath(id, '/progress')),
    call<Pacing>(crawlPath(id, '/pacing')),
    call<Decisions>(crawlPath(id, '/decisions')),
  ]);
  if (shown !== id) return;
  if (!c.ok) {
    detail.hidden = true;
    setStatus(explain(c, 'the crawl'), true);
    return;
  }
  summary(c.body);
  if (p.ok) progress(p.body);
  else unavailable('progress-note', p);
  if (a.ok) pacing(a.body);
  else unavailable('pacing-note', a);
  if (d.ok) decisions(d.body);
  else unavailable('decisions-note', d);
  const running = c.body.state === 'running';
  setStatus(
    `Crawl ${c.body.state}${c.body.stopReason ? ` (${c.body.stopReason})` : ''}${running ? `: progress refreshes every ${Math.max(1, Math.round(pollMs / 1000))} s.` : '.'}`,
  );
  if (running) timer = setTimeout(() => void poll(id), pollMs);
  // the person who asked is taken to it; a refresh at the end of polling leaves focus alone
  if (focus) detail.focus();
}

async function poll(id: string): Promise<void> {
  timer = null;
  if (shown !== id || byId('crawl-detail').hidden) return;
  const [c, p, a] = await Promise.all([call<Crawl>(crawlPath(id)), call<Progress>(crawlPath(id, '/progress')), call<Pacing>(crawlPath(id, '/pacing'))]);
  if (shown !== id) return;
  if (c.ok) summary(c.body);
  if (p.ok) progress(p.body);
  if (a.ok) pacing(a.body);
  // finished: one last full load (the pacing audit and decisions are final now), then no more polls
  if (c.ok && c.body.state !== 'running') {
    await showCrawl(id, false);
    return;
  }
  if (!c.ok) setStatus(`${explain(c, 'the crawl')} Still trying every ${Math.max(1, Math.round(pollMs / 1000))} s.`, true);
  timer = setTimeout(() => void poll(id), pollMs);
}
