// Building the page from data with text nodes only: nothing the API returns is parsed as HTML.

type Props = { className?: string; text?: string; dataset?: Record<string, string>; attrs?: Record<string, string> };

export function el<K extends keyof HTMLElementTagNameMap>(tag: K, props: Props = {}, children: (Node | string)[] = []): HTMLElementTagNameMap[K] {
  const e = document.createElement(tag);
  if (props.className !== undefined) e.className = props.className;
  if (props.text !== undefined) e.textContent = props.text;
  for (const [k, v] of Object.entries(props.dataset ?? {})) e.dataset[k] = v;
  for (const [k, v] of Object.entries(props.attrs ?? {})) e.setAttribute(k, v);
  e.append(...children);
  return e;
}

export function byId<T extends HTMLElement = HTMLElement>(id: string): T {
  const e = document.getElementById(id);
  if (e === null) throw new Error(`the page has no #${id}`);
  return e as T;
}

export function tbody(tableId: string): HTMLTableSectionElement {
  const b = byId<HTMLTableElement>(tableId).tBodies[0];
  if (b === undefined) throw new Error(`#${tableId} has no tbody`);
  return b;
}

/** A row of text cells. */
export function row(values: readonly (string | number | null | undefined)[], className?: string): HTMLTableRowElement {
  return el(
    'tr',
    className === undefined ? {} : { className },
    values.map((v) => el('td', { text: v === null || v === undefined ? '' : String(v) })),
  );
}

/**
 * Gives each `<table data-columns="A|B|[C]">` under `root` its head row, one column header per
 * name (a name in brackets is read to screen readers only), and an empty body: the page's HTML
 * names a table's columns on one line.
 */
export function buildTableHeads(root: ParentNode): void {
  for (const table of root.querySelectorAll<HTMLTableElement>('table[data-columns]')) {
    const headers = (table.dataset.columns ?? '').split('|').map((name) => {
      const hidden = /^\[(.+)\]$/.exec(name);
      return el('th', { attrs: { scope: 'col' } }, [hidden ? el('span', { className: 'visually-hidden', text: hidden[1] }) : name]);
    });
    table.createTHead().append(el('tr', {}, headers));
    if (table.tBodies.length === 0) table.createTBody();
  }
}

export function fill(tableId: string, rows: readonly HTMLTableRowElement[]): void {
  tbody(tableId).replaceChildren(...rows);
}

/** A <time> showing the local date and time, the ISO instant in its datetime and title. */
export function time(iso: string | null | undefined): HTMLElement | string {
  if (!iso) return '';
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return iso;
  return el('time', { text: d.toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'medium' }), attrs: { datetime: iso, title: iso } });
}

/** A link that runs `onClick` instead of navigating (reached with Tab, followed with Enter). */
export function action(label: string, className: string, href: string, onClick: () => void): HTMLAnchorElement {
  const a = el('a', { className, text: label, attrs: { href } });
  a.addEventListener('click', (e) => {
    e.preventDefault();
    onClick();
  });
  return a;
}
