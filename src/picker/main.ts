// The picker's entry: asks the API how it identifies callers (/picker/config.json), puts up the
// matching form (dev: two names; oidc: a pasted token; none: only a notice), and wires the
// Archives (with search, when the API has it) and Crawls views.
import { setMode, setStatus, type PickerConfig } from './api.js';
import { loadArchives } from './archives.js';
import { loadCrawls, setPollMs, stopPolling } from './crawls.js';
import { buildTableHeads, byId } from './dom.js';
import { setReplayUrl } from './open.js';
import { clearSearch, runSearch, searchAvailable } from './search.js';

const REMEMBERED = ['subject', 'organizations', 'token'];
type View = 'archives' | 'crawls';
let view: View = 'archives';

function mount(templateId: string): void {
  const content = byId<HTMLTemplateElement>(templateId).content.cloneNode(true) as DocumentFragment;
  buildTableHeads(content);
  byId('app').append(content);
}

function remember(): void {
  for (const id of REMEMBERED) {
    const e = document.getElementById(id) as HTMLInputElement | null;
    if (e) sessionStorage.setItem(`picker.${id}`, e.value);
  }
}

function restore(): void {
  for (const id of REMEMBERED) {
    const e = document.getElementById(id) as HTMLInputElement | null;
    const v = sessionStorage.getItem(`picker.${id}`);
    if (e && v) e.value = v;
  }
}

function showView(name: View): void {
  view = name;
  byId('archives-view').hidden = name !== 'archives';
  byId('crawls-view').hidden = name !== 'crawls';
  for (const b of document.querySelectorAll<HTMLButtonElement>('nav button')) b.setAttribute('aria-pressed', String(b.dataset.view === name));
  stopPolling();
}

function loadView(): void {
  remember();
  if (view === 'crawls') void loadCrawls(false);
  else {
    clearSearch();
    void loadArchives(false);
  }
}

async function wireSearch(): Promise<void> {
  if (!(await searchAvailable())) return;
  const form = byId<HTMLFormElement>('search');
  form.hidden = false;
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    remember();
    void runSearch(false);
  });
  byId('search-more').addEventListener('click', () => void runSearch(true));
  byId('search-clear').addEventListener('click', () => {
    byId<HTMLInputElement>('q').value = '';
    loadView();
  });
}

async function boot(): Promise<void> {
  byId('loading').remove();
  let config: PickerConfig;
  try {
    const res = await fetch('/picker/config.json');
    config = (await res.json()) as PickerConfig;
  } catch (e) {
    byId('app').textContent = `The API did not answer (${e instanceof Error ? e.message : String(e)}).`;
    return;
  }
  setMode(config.mode);
  setReplayUrl(config.replayUrl);
  setPollMs(config.pollMs);
  mount(`tpl-${config.mode}`);
  if (config.mode === 'none') return;
  mount('tpl-views');
  restore();
  byId('who').addEventListener('submit', (e) => {
    e.preventDefault();
    loadView();
  });
  byId('more').addEventListener('click', () => void loadArchives(true));
  byId('crawls-more').addEventListener('click', () => void loadCrawls(true));
  for (const b of document.querySelectorAll<HTMLButtonElement>('nav button')) {
    b.addEventListener('click', () => {
      showView(b.dataset.view === 'crawls' ? 'crawls' : 'archives');
      loadView();
    });
  }
  await wireSearch();
  setStatus('');
}

void boot();
