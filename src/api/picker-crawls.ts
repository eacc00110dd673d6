// The picker's Crawls view (issue 13, add 9): the crawl list (GET /api/crawls, "More" continues
// with before + beforeId), and for one crawl its state and stopReason (GET /api/crawls/:id), live
// progress polled while it runs (GET /api/crawls/:id/progress), the pacing audit per host
// (GET /api/crawls/:id/pacing) and what the rules decided (GET /api/crawls/:id/decisions).
// Markup and browser script only; picker.ts puts them in the page. The script uses the page's
// headers(), setStatus() and explain(), builds everything with textContent (no HTML from data).

export const CRAWLS_STYLE = `
nav { display: flex; gap: .5rem; margin-bottom: 1rem; }
nav button[aria-pressed="true"] { font-weight: bold; }
#crawl-detail h2 { font-size: 1.15rem; margin-top: 1.5rem; }
#crawl-detail h3 { font-size: 1rem; margin: 1.2rem 0 .4rem; }
dl.summary { display: grid; grid-template-columns: max-content 1fr; gap: .2rem 1rem; }
dl.summary dt { color: #555; }
.state-running { color: #a06000; }
.state-failed { color: #a00; }
.state-succeeded { color: #070; }
`;

export const CRAWLS_HTML = `<section id="crawls-view" hidden>
<table id="crawls"><thead><tr><th>Started</th><th>Organization</th><th>State</th><th>Stop reason</th><th>Seeds</th><th>WACZ</th><th></th></tr></thead><tbody></tbody></table>
<p><button id="crawls-more" type="button" hidden>More</button></p>
<div id="crawl-detail" hidden>
<h2 id="crawl-title"></h2>
<dl class="summary" id="crawl-summary"></dl>
<h3>Progress <small id="progress-note"></small></h3>
<table id="progress-levels"><thead><tr><th>Depth</th><th>Pages</th><th>Captured</th><th>Failed</th><th>Skipped</th><th>Pending</th><th>Cut</th><th>Flow says</th></tr></thead><tbody></tbody></table>
<table id="progress-hosts"><thead><tr><th>Host</th><th>Queued</th><th>In flight</th><th>Next allowed start</th></tr></thead><tbody></tbody></table>
<h3>Pacing <small id="pacing-note"></small></h3>
<table id="pacing"><thead><tr><th>Host</th><th>Pages</th><th>Smallest gap</th><th>Owed delay</th><th>Violations</th></tr></thead><tbody></tbody></table>
<h3>Decisions</h3>
<table id="decisions"><thead><tr><th>Depth</th><th>Rule</th><th>Action</th><th>Host</th><th>Links</th><th>Samples</th></tr></thead><tbody></tbody></table>
<p id="robots"></p>
</div>
</section>`;

export const CRAWLS_SCRIPT = String.raw`
const crawlsBody = document.querySelector('#crawls tbody');
const crawlsMore = document.getElementById('crawls-more');
const detail = document.getElementById('crawl-detail');
const POLL_MS = Number(document.body.dataset.poll);
let crawlsLast = null;
let shownCrawl = null;
let pollTimer = null;

function row(tbodyEl, values, cls) {
  const tr = document.createElement('tr');
  if (cls) tr.className = cls;
  for (const v of values) cell(tr, v == null ? '' : String(v));
  tbodyEl.appendChild(tr);
  return tr;
}
function fill(selector, rows, cls) {
  const el = document.querySelector(selector + ' tbody');
  el.textContent = '';
  for (const values of rows) row(el, values, cls);
}
async function getJson(path) {
  const res = await fetch(path, { headers: headers() });
  return { res, body: await res.json().catch(() => ({})) };
}
function stopPolling() { if (pollTimer !== null) { clearTimeout(pollTimer); pollTimer = null; } }

async function loadCrawls(append) {
  if (!append) { crawlsBody.textContent = ''; crawlsLast = null; detail.hidden = true; stopPolling(); }
  crawlsMore.hidden = true;
  setStatus('Loading crawls…');
  const q = new URLSearchParams({ limit: String(PAGE) });
  if (append && crawlsLast) { q.set('before', crawlsLast.startedAt); q.set('beforeId', crawlsLast.id); }
  let r;
  try { r = await getJson('/api/crawls?' + q); } catch (e) { setStatus('The API did not answer: ' + e.message, true); return; }
  if (!r.res.ok) { setStatus(explain(r.res, r.body), true); return; }
  for (const c of r.body) {
    const tr = row(crawlsBody, [c.startedAt, c.orgId, c.state, c.stopReason || '', c.seeds.join(' '), c.waczCount], 'crawl');
    tr.dataset.id = c.id;
    tr.children[2].className = 'state-' + c.state;
    const link = document.createElement('a');
    link.className = 'show';
    link.href = '#crawl-' + c.id;
    link.textContent = 'details';
    link.addEventListener('click', (e) => { e.preventDefault(); showCrawl(c.id); });
    cell(tr, '').appendChild(link);
  }
  const shown = crawlsBody.children.length;
  setStatus(shown === 0 ? 'No crawls you may see (the list needs can_submit on your first organization).' : shown + ' crawl' + (shown === 1 ? '' : 's') + ' shown.');
  if (r.body.length === PAGE) { crawlsLast = r.body[r.body.length - 1]; crawlsMore.hidden = false; }
}

function summary(c) {
  const dl = document.getElementById('crawl-summary');
  dl.textContent = '';
  const items = [
    ['State', c.state], ['Stop reason', c.stopReason || '—'], ['Failure', c.failure || '—'],
    ['Started', c.startedAt], ['Finished', c.finishedAt || '—'], ['Seeds', c.seeds.join(' ')],
    ['Depth reached', c.depthReached + ' of ' + c.maxDepth], ['Pages discovered', c.pagesDiscovered],
    ['Captured', c.pagesCaptured], ['Failed', c.pagesFailed], ['Skipped', c.pagesSkipped], ['Pending', c.pagesPending], ['WACZ', c.waczCount],
  ];
  for (const [k, v] of items) {
    const dt = document.createElement('dt'); dt.textContent = k;
    const dd = document.createElement('dd'); dd.textContent = String(v); dd.dataset.field = k;
    if (k === 'State') dd.className = 'state-' + v;
    dl.append(dt, dd);
  }
  document.getElementById('crawl-title').textContent = 'Crawl ' + c.id;
}

function progress(p) {
  document.getElementById('progress-note').textContent = (p.source === 'workflow' ? 'live' : 'from the ledger') + (p.phase ? ', ' + p.phase : '') + (p.depth != null ? ', depth ' + p.depth : '');
  fill('#progress-levels', p.levels.map((l) => [l.depth, l.pages, l.captured, l.failed, l.skipped, l.pending, l.cut, l.heartbeat ? l.heartbeat.pagesDone + ' of ' + l.heartbeat.pagesTotal + ' done, ' + l.heartbeat.pagesInFlight + ' in flight' : '']), 'level');
  fill('#progress-hosts', p.hosts.map((h) => [h.host, h.queued, h.inFlight, h.nextAllowedAt || '']), 'host');
}

function pacing(a) {
  document.getElementById('pacing-note').textContent = a.violations === 0 ? 'no host was visited sooner than it was owed' : a.violations + ' gap' + (a.violations === 1 ? '' : 's') + ' shorter than owed';
  fill('#pacing', a.hosts.map((h) => [h.host, h.pages, h.minGapMs == null ? '' : h.minGapMs + ' ms', h.effectiveDelayMs + ' ms', h.violations]), 'pacing-host');
}

function decisions(d) {
  fill('#decisions', d.decisions.map((x) => [x.depth, x.rule, x.action, x.hostname, x.links, x.samples.join(' ')]), 'decision');
  document.getElementById('robots').textContent = d.robots.length === 0 ? '' : 'robots.txt kept out: ' + d.robots.map((r) => r.hostname + ' (' + r.pages + ')').join(', ');
}

/** One crawl: everything once, then progress (and the summary) again every POLL_MS while it runs. */
async function showCrawl(id) {
  stopPolling();
  shownCrawl = id;
  detail.hidden = false;
  setStatus('Loading crawl ' + id + '…');
  const [c, p, a, d] = await Promise.all(['', '/progress', '/pacing', '/decisions'].map((s) => getJson('/api/crawls/' + encodeURIComponent(id) + s).catch((e) => ({ res: { ok: false, status: 0, statusText: e.message }, body: {} }))));
  if (shownCrawl !== id) return;
  if (!c.res.ok) { detail.hidden = true; setStatus(explain(c.res, c.body), true); return; }
  summary(c.body);
  if (p.res.ok) progress(p.body); else document.getElementById('progress-note').textContent = 'unavailable (' + p.res.status + ')';
  if (a.res.ok) pacing(a.body); else document.getElementById('pacing-note').textContent = 'unavailable (' + a.res.status + ')';
  if (d.res.ok) decisions(d.body);
  setStatus('Crawl ' + c.body.state + (c.body.stopReason ? ' (' + c.body.stopReason + ')' : '') + (c.body.state === 'running' ? ': progress refreshes every ' + Math.round(POLL_MS / 1000) + ' s.' : '.'));
  if (c.body.state === 'running') pollTimer = setTimeout(() => poll(id), POLL_MS);
}

async function poll(id) {
  pollTimer = null;
  if (shownCrawl !== id || detail.hidden) return;
  const [c, p] = await Promise.all([getJson('/api/crawls/' + encodeURIComponent(id)), getJson('/api/crawls/' + encodeURIComponent(id) + '/progress')]).catch(() => [null, null]);
  if (shownCrawl !== id) return;
  if (c && c.res.ok) summary(c.body);
  if (p && p.res.ok) progress(p.body);
  // finished: one last full load (the pacing audit and decisions are final now), then no more polls
  if (c && c.res.ok && c.body.state !== 'running') { showCrawl(id); return; }
  pollTimer = setTimeout(() => poll(id), POLL_MS);
}

if (crawlsMore) crawlsMore.addEventListener('click', () => loadCrawls(true));
`;
