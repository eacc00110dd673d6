// The picker at `/`: the archive list, rendered, with each row opening replay, and the Crawls
// view (picker-crawls.ts). The browser cannot tell "no name given" from "this API wants a JWT"
// (both are 401 {"error":"unauthenticated"}), so the API, which knows its identity mode, decides
// what the page asks for when it renders it:
//   dev  — two name fields, sent as X-Capture-ledger-Subject / X-Capture-ledger-Organizations;
//   oidc — a token field (pasted; the picker mints nothing: the issuer lives on 127.0.0.1 only);
//   none — only a notice.
// Self-contained HTML with inline JS; no build step. Opening a row asks the API to sign the
// archive (POST /api/archives/:id/url: can_view at HIGHER_CONSISTENCY) and hands replay that
// short-lived signed source, which the replay server proxies: knowing a key is not enough.
import type { FastifyInstance } from 'fastify';
import type { IdentityMode } from './identity.ts';
import { CRAWLS_HTML, CRAWLS_SCRIPT, CRAWLS_STYLE } from './picker-crawls.ts';

export interface PickerOptions {
  replayUrl: string;
  /** how often the Crawls view refreshes a running crawl's progress (default 2000 ms) */
  pollMs?: number;
}

export const PICKER_POLL_MS = 2000;

const escapeHtml = (s: string): string => s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

/**
 * `${replayUrl}/?source=<encoded /wacz/<objectKey>?<signature>>`: the key with each path segment
 * percent-encoded, and the query (X-Amz-*) of the presigned URL the API signed for it.
 */
export function replayLink(replayUrl: string, objectKey: string, signedUrl: string, requires: readonly { objectKey: string; url: string }[] = []): string {
  const source = (key: string, signed: string): string => `/wacz/${key.split('/').map(encodeURIComponent).join('/')}${new URL(signed).search}`;
  const own = source(objectKey, signedUrl);
  // with the archives it requires: replay's /collection/ of those sources (src/replay/source.ts)
  const whole = requires.length === 0 ? own : `/collection/${[own, ...requires.map((r) => source(r.objectKey, r.url))].map(encodeURIComponent).join('/')}/collection.json`;
  return `${replayUrl.replace(/\/+$/, '')}/?source=${encodeURIComponent(whole)}`;
}

const STYLE = `
body { font: 15px/1.4 system-ui, sans-serif; margin: 2rem auto; max-width: 72rem; padding: 0 1rem; color: #222; }
h1 { font-size: 1.4rem; }
form { display: flex; gap: .75rem; align-items: end; flex-wrap: wrap; margin-bottom: 1rem; }
label { display: flex; flex-direction: column; font-size: .85rem; gap: .2rem; }
input, textarea { font: inherit; padding: .3rem .4rem; }
textarea { width: 40rem; height: 4rem; font-family: monospace; font-size: .8rem; }
button { font: inherit; padding: .35rem .9rem; }
table { border-collapse: collapse; width: 100%; }
th, td { text-align: left; padding: .3rem .5rem; border-bottom: 1px solid #ddd; vertical-align: top; }
td.url { word-break: break-all; }
#status { min-height: 1.4em; }
.error { color: #a00; }
.notice { padding: .8rem 1rem; background: #fff4d6; border: 1px solid #e6c66e; }
`;

function credentialsForm(mode: IdentityMode): string {
  if (mode === 'dev') {
    return `<form id="who">
  <label>Subject<input id="subject" name="subject" autocomplete="username" required placeholder="alice"></label>
  <label>Organizations (comma separated)<input id="organizations" name="organizations" placeholder="acme"></label>
  <button id="list" type="submit">List</button>
</form>
<p class="hint">Development identity: the API trusts these names as given (X-Capture-ledger-Subject / X-Capture-ledger-Organizations).</p>`;
  }
  if (mode === 'oidc') {
    return `<form id="who">
  <label>Bearer token (paste a JWT from your identity provider)<textarea id="token" name="token" required spellcheck="false"></textarea></label>
  <button id="list" type="submit">List</button>
</form>
<p class="hint">This API verifies JWTs; the dev name headers are not accepted. For local development, the dev issuer (<code>npm run issuer</code>, on 127.0.0.1 only) mints one: <code>POST /token {"subject":"alice","organizations":["acme"]}</code>; paste its <code>access_token</code>.</p>`;
  }
  return `<p id="notice" class="notice">This API identifies nobody, so every request is refused (401). Set <code>CAPTURE_LEDGER_DEV_IDENTITY=1</code> for development, or <code>CAPTURE_LEDGER_OIDC_ISSUER</code> to accept JWTs, and restart the API.</p>`;
}

// The page's script. Runs in the browser; builds the table with textContent only (no HTML from data).
const SCRIPT = String.raw`
const MODE = document.body.dataset.mode;
const REPLAY = document.body.dataset.replay.replace(/\/+$/, '');
const form = document.getElementById('who');
const tbody = document.querySelector('#archives tbody');
const statusEl = document.getElementById('status');
const more = document.getElementById('more');
const PAGE = 50;
// the archive list's next page: its Link header (rel="next"), which also continues a page the
// API cut short (X-Stopped-Early) from where it stopped, ties on capturedAt included
let next = null;
let view = 'archives';

function setStatus(text, isError) { statusEl.textContent = text; statusEl.className = isError ? 'error' : ''; }
function waczSource(key, signed) { return '/wacz/' + key.split('/').map(encodeURIComponent).join('/') + new URL(signed).search; }
function replayLink(key, signed, requires) {
  const own = waczSource(key, signed);
  const whole = !requires || requires.length === 0 ? own : '/collection/' + [own].concat(requires.map((r) => waczSource(r.objectKey, r.url))).map(encodeURIComponent).join('/') + '/collection.json';
  return REPLAY + '/?source=' + encodeURIComponent(whole);
}
// One click: the tab opens at once (inside the click, so no popup blocker), the API signs the
// archive (can_view, strongly consistent), and the tab goes to replay with that signed source.
async function openArchive(a) {
  const tab = window.open('', '_blank');
  if (tab) tab.opener = null;
  setStatus('Opening ' + (a.finalUrl || a.url) + '…');
  let res;
  try { res = await fetch('/api/archives/' + encodeURIComponent(a.id) + '/url', { method: 'POST', headers: headers() }); }
  catch (e) { if (tab) tab.close(); setStatus('The API did not answer: ' + e.message, true); return; }
  const body = await res.json().catch(() => ({}));
  if (!res.ok) { if (tab) tab.close(); setStatus('Could not open it (' + res.status + '): ' + (body.error || res.statusText), true); return; }
  const href = replayLink(a.objectKey, body.url, body.requires);
  if (tab) tab.location.href = href; else window.location.href = href;
  setStatus('Opened in replay; the link is valid for ' + body.expiresIn + ' s.' + (body.withheld ? ' ' + body.withheld + ' archive(s) it requires could not be signed for you: what they hold is missing from the replay.' : ''));
}
function headers() {
  if (MODE === 'dev') {
    const h = { 'X-Capture-ledger-Subject': document.getElementById('subject').value.trim() };
    const orgs = document.getElementById('organizations').value.trim();
    if (orgs) h['X-Capture-ledger-Organizations'] = orgs;
    return h;
  }
  if (MODE === 'oidc') return { Authorization: 'Bearer ' + document.getElementById('token').value.trim() };
  return {};
}
function remember() {
  for (const id of ['subject', 'organizations', 'token']) { const el = document.getElementById(id); if (el) sessionStorage.setItem('picker.' + id, el.value); }
}
function restore() {
  for (const id of ['subject', 'organizations', 'token']) { const el = document.getElementById(id); const v = sessionStorage.getItem('picker.' + id); if (el && v) el.value = v; }
}
function cell(tr, text, cls) { const td = document.createElement('td'); td.textContent = text; if (cls) td.className = cls; tr.appendChild(td); return td; }
function size(n) { return n == null ? '' : n < 1024 ? n + ' B' : n < 1048576 ? (n / 1024).toFixed(1) + ' KiB' : (n / 1048576).toFixed(1) + ' MiB'; }

function explain(res, body) {
  if (res.status === 401) return MODE === 'oidc' ? 'Not accepted (401): the token is missing, expired, or not from the configured issuer.' : 'Not accepted (401): give a subject name.';
  return 'Error ' + res.status + ': ' + (body.error || res.statusText);
}
function nextLink(res) {
  const m = /<([^>]+)>\s*;\s*rel="next"/.exec(res.headers.get('link') || '');
  return m ? m[1] : null;
}

async function load(append) {
  if (!append) { tbody.textContent = ''; next = null; }
  more.hidden = true;
  setStatus('Loading…');
  const url = append && next ? next : '/api/archives?' + new URLSearchParams({ limit: String(PAGE) });
  let res;
  try { res = await fetch(url, { headers: headers() }); }
  catch (e) { setStatus('The API did not answer: ' + e.message, true); return; }
  const body = await res.json().catch(() => ({}));
  if (!res.ok) { setStatus(explain(res, body), true); return; }
  for (const a of body) {
    const tr = document.createElement('tr');
    tr.className = 'archive';
    tr.dataset.id = a.id;
    cell(tr, a.capturedAt);
    cell(tr, a.finalUrl || a.url, 'url');
    cell(tr, size(a.size));
    const td = cell(tr, '');
    const link = document.createElement('a');
    link.className = 'open';
    link.href = '#open';
    link.textContent = 'open in replay';
    link.addEventListener('click', (e) => { e.preventDefault(); openArchive(a); });
    td.appendChild(link);
    tbody.appendChild(tr);
  }
  const shown = tbody.children.length;
  const stopped = res.headers.get('x-stopped-early') === 'true';
  setStatus((shown === 0 ? 'No archives you may see' : shown + ' archive' + (shown === 1 ? '' : 's') + ' shown') + (stopped ? ' so far: more may follow.' : '.'));
  next = nextLink(res);
  more.hidden = next === null;
}
`;

// Switching views and the form: runs after both views' scripts.
const WIRING = String.raw`
function showView(name) {
  view = name;
  document.getElementById('archives-view').hidden = name !== 'archives';
  document.getElementById('crawls-view').hidden = name !== 'crawls';
  for (const b of document.querySelectorAll('nav button')) b.setAttribute('aria-pressed', String(b.dataset.view === name));
  stopPolling();
}
function loadView() { remember(); if (view === 'crawls') loadCrawls(false); else load(false); }
if (form) {
  restore();
  form.addEventListener('submit', (e) => { e.preventDefault(); loadView(); });
  more.addEventListener('click', () => load(true));
  for (const b of document.querySelectorAll('nav button')) b.addEventListener('click', () => { showView(b.dataset.view); loadView(); });
}
`;

/** The whole page for one identity mode. */
export function pickerView(mode: IdentityMode, opts: PickerOptions): string {
  const views =
    mode === 'none'
      ? ''
      : `<nav><button type="button" data-view="archives" aria-pressed="true">Archives</button><button type="button" data-view="crawls" aria-pressed="false">Crawls</button></nav>
<p id="status"></p>
<section id="archives-view">
<table id="archives"><thead><tr><th>Captured</th><th>URL</th><th>Size</th><th></th></tr></thead><tbody></tbody></table>
<p><button id="more" type="button" hidden>More</button></p>
</section>
${CRAWLS_HTML}`;
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>capture-ledger — archives and crawls</title>
<style>${STYLE}${CRAWLS_STYLE}</style>
</head>
<body data-mode="${escapeHtml(mode)}" data-replay="${escapeHtml(opts.replayUrl)}" data-poll="${Math.max(100, Math.floor(opts.pollMs ?? PICKER_POLL_MS))}">
<h1>capture-ledger</h1>
${credentialsForm(mode)}
${views}
${mode === 'none' ? '' : `<script>${SCRIPT}${CRAWLS_SCRIPT}${WIRING}</script>`}
</body>
</html>
`;
}

/** Serves the picker at `/`, rendered once for the mode chosen at startup. */
export async function pickerRoutes(app: FastifyInstance, opts: { mode: IdentityMode; replayUrl: string; pollMs?: number }): Promise<void> {
  const html = pickerView(opts.mode, { replayUrl: opts.replayUrl, ...(opts.pollMs !== undefined ? { pollMs: opts.pollMs } : {}) });
  app.get(
    '/',
    {
      config: { public: true },
      schema: {
        summary: 'The picker: archives and crawls (HTML)',
        tags: ['picker'],
        hide: true,
        querystring: { type: 'object', properties: {}, additionalProperties: false },
        response: { 200: { type: 'string', description: 'text/html' } },
      },
    },
    async (_request, reply) => {
      return reply
        .type('text/html; charset=utf-8')
        .header('cache-control', 'no-store')
        .header('content-security-policy', "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; connect-src 'self'; form-action 'none'; base-uri 'none'; frame-ancestors 'none'")
        .send(html);
    },
  );
}
