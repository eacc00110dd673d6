// Full-text search, when the API has it (GET /api/search exists only when OpenSearch is
// configured): one box; each hit shows its title, URL, the snippet with the query's words marked,
// and its capture time, and opens in replay in one click. "More results" passes the answer's
// nextOffset back as offset.
import { call, explain, setStatus } from './api.js';
import { action, byId, el, tbody, time } from './dom.js';
import { highlight } from './format.js';
import { openArchive } from './open.js';

const LIMIT = 20;

interface Hit {
  archiveId: string;
  objectKey: string;
  url: string;
  title?: string;
  textWithheld?: string;
  capturedAt: string;
  snippet?: string;
}

interface SearchAnswer {
  hits: Hit[];
  total: number;
  nextOffset?: number;
}

let query = '';
let nextOffset: number | undefined;

/** Whether this API has search: its OpenAPI document lists GET /api/search. */
export async function searchAvailable(): Promise<boolean> {
  const r = await call<{ paths?: Record<string, unknown> }>('/api/openapi.json');
  return r.ok && r.body.paths?.['/api/search'] !== undefined;
}

function snippet(h: Hit): HTMLElement {
  if (h.textWithheld) return el('p', { className: 'snippet withheld', text: `Text not kept (${h.textWithheld}).` });
  return el(
    'p',
    { className: 'snippet' },
    highlight(h.snippet ?? '', query).map((s) => (s.mark ? el('mark', { text: s.text }) : s.text)),
  );
}

function hitRow(h: Hit): HTMLTableRowElement {
  const open = action(h.title || h.url, 'open', `#open-${h.archiveId}`, () => void openArchive({ id: h.archiveId, objectKey: h.objectKey, url: h.url }));
  open.setAttribute('aria-label', `Open ${h.title || h.url} in replay`);
  return el('tr', { className: 'hit', dataset: { id: h.archiveId } }, [
    el('td', { className: 'hit-main' }, [el('div', { className: 'title' }, [open]), el('div', { className: 'url', text: h.url }), snippet(h)]),
    el('td', { className: 'captured' }, [time(h.capturedAt)]),
  ]);
}

export async function runSearch(append: boolean): Promise<void> {
  const body = tbody('hits');
  const more = byId<HTMLButtonElement>('search-more');
  if (!append) {
    query = byId<HTMLInputElement>('q').value.trim();
    nextOffset = undefined;
    body.replaceChildren();
    // the results take the list's place until "Back to the list"
    byId('archives').hidden = true;
    byId('more').hidden = true;
    byId('search-clear').hidden = false;
  }
  more.hidden = true;
  byId('hits').hidden = false;
  if (query === '') {
    setStatus('Type a word to search for.', true);
    return;
  }
  setStatus(`Searching for “${query}”…`);
  const q = new URLSearchParams({ q: query, limit: String(LIMIT) });
  if (append && nextOffset !== undefined) q.set('offset', String(nextOffset));
  const r = await call<SearchAnswer>(`/api/search?${q}`);
  if (!r.ok) {
    setStatus(explain(r, 'search'), true);
    return;
  }
  body.append(...r.body.hits.map(hitRow));
  const n = body.children.length;
  nextOffset = r.body.nextOffset;
  setStatus(
    n === 0
      ? `Nothing you may see matches “${query}”.`
      : `${n === 1 ? '1 page matches' : `${n} pages match`} “${query}”${nextOffset !== undefined ? ', more may follow' : ''}.`,
  );
  more.hidden = nextOffset === undefined;
}

export function clearSearch(): void {
  byId('hits').hidden = true;
  byId('archives').hidden = false;
  byId('search-clear').hidden = true;
  tbody('hits').replaceChildren();
  byId<HTMLButtonElement>('search-more').hidden = true;
}
