// The archive list: newest first, each row with its thumbnail (when the capture has a screenshot),
// title, URL, capture time and size; "More" follows the API's Link header, which also continues a
// page the API cut short (X-Stopped-Early) from where it stopped.
import { call, explain, nextLink, setStatus } from './api.js';
import { action, byId, el, tbody, time } from './dom.js';
import { formatSize } from './format.js';
import { openArchive } from './open.js';

export const PAGE = 50;

interface Archive {
  id: string;
  url: string;
  finalUrl: string | null;
  objectKey: string;
  size: number | null;
  capturedAt: string;
  title?: string | null;
  thumbnail?: string | null;
  qa?: { verdict: 'good' | 'review'; attempts: number } | null;
}

interface SignedUrl {
  url: string;
  expiresIn: number;
}

let next: string | null = null;

/** The screenshot, signed for this caller (can_view, as the WACZ); nothing when it is refused. */
async function loadThumbnail(a: Archive, img: HTMLImageElement): Promise<void> {
  const r = await call<SignedUrl>(`/api/archives/${encodeURIComponent(a.id)}/thumbnail-url`, { method: 'POST' });
  if (r.ok) {
    img.addEventListener('error', () => img.replaceWith(el('span', { className: 'thumb-missing', text: 'preview did not load' })), { once: true });
    img.src = r.body.url;
  } else img.replaceWith(el('span', { className: 'thumb-missing', text: r.status === 404 ? '' : `no preview (${r.status})` }));
}

/** The capture's quality check in words: good, or needs review (and whether it was captured again). */
function qaMark(qa: NonNullable<Archive['qa']>): HTMLElement {
  const text = qa.verdict === 'good' ? 'QA: good' : `QA: needs review${qa.attempts > 1 ? ' (captured twice)' : ''}`;
  return el('span', {
    className: `qa qa-${qa.verdict}`,
    text,
    attrs: { title: 'compared with its own replay: how it looked, what it said, what it asked for' },
  });
}

function archiveRow(a: Archive): HTMLTableRowElement {
  const url = a.finalUrl || a.url;
  const thumb = el('td', { className: 'thumb' });
  if (a.thumbnail) {
    const img = el('img', { attrs: { alt: `Screenshot of ${a.title || url}`, width: '160', decoding: 'async' } });
    thumb.append(img);
    void loadThumbnail(a, img);
  }
  const open = action('open in replay', 'open', `#open-${a.id}`, () => void openArchive({ id: a.id, objectKey: a.objectKey, url }));
  open.setAttribute('aria-label', `Open ${a.title || url} in replay`);
  return el('tr', { className: 'archive', dataset: { id: a.id } }, [
    thumb,
    el('td', { className: 'title' }, [a.title ?? '', ...(a.qa ? [' ', qaMark(a.qa)] : [])]),
    el('td', { className: 'url', text: url }),
    el('td', { className: 'captured' }, [time(a.capturedAt)]),
    el('td', { className: 'size', text: formatSize(a.size) }),
    el('td', { className: 'actions' }, [open]),
  ]);
}

export async function loadArchives(append: boolean): Promise<void> {
  const body = tbody('archives');
  const more = byId<HTMLButtonElement>('more');
  if (!append) {
    body.replaceChildren();
    next = null;
  }
  more.hidden = true;
  setStatus('Loading…');
  const r = await call<Archive[]>(append && next ? next : `/api/archives?${new URLSearchParams({ limit: String(PAGE) })}`);
  if (!r.ok) {
    setStatus(explain(r, 'the list'), true);
    return;
  }
  body.append(...r.body.map(archiveRow));
  const shown = body.children.length;
  const stopped = r.headers.get('x-stopped-early') === 'true';
  setStatus(`${shown === 0 ? 'No archives you may see' : `${shown} archive${shown === 1 ? '' : 's'} shown`}${stopped ? ' so far: more may follow.' : '.'}`);
  next = nextLink(r.headers);
  more.hidden = next === null;
}
