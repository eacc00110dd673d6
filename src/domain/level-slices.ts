// How a level is cut into slices for the capture tier's workflows (design.md "The capture tier on
// Temporal"). A slice is a child workflow that paces its own hosts; a workflow's history grows by
// about ten events a page, so a slice holds at most SLICE_PAGES pages and a 20,000-page level
// stays far inside Temporal's history limits. A host is never split while it fits in a slice: its
// spacing is then kept by one pacer. The level's hostParallelism is shared out among the slices
// that run at once, so no more hosts are captured at once than the dispatch allows.

/** Pages a slice may hold: about 10,000 history events, a fifth of Temporal's hard limit. */
export const SLICE_PAGES = 1000;

export interface Slice {
  /** indices into the dispatch's pages, in dispatch order */
  pages: number[];
  hosts: number;
  /** set on the slices a host too large for one slice was cut into: they run one after another */
  splitHost?: string;
}

/** Groups pages by host (hosts in order of first appearance) and packs whole hosts into slices
 * of at most `maxPages`; a host with more pages than that is cut into slices of its own, which
 * run one after another (see sliceSlots) so its spacing holds across them. */
export function planSlices(hostOfPage: readonly string[], maxPages = SLICE_PAGES): Slice[] {
  if (!Number.isInteger(maxPages) || maxPages < 1) throw new RangeError(`maxPages must be an integer ≥ 1, got ${maxPages}`);
  const byHost = new Map<string, number[]>();
  hostOfPage.forEach((host, i) => {
    const list = byHost.get(host);
    if (list === undefined) byHost.set(host, [i]);
    else list.push(i);
  });
  const slices: Slice[] = [];
  let open: Slice = { pages: [], hosts: 0 };
  const close = (): void => {
    if (open.pages.length > 0) slices.push({ pages: open.pages.sort((a, b) => a - b), hosts: open.hosts });
    open = { pages: [], hosts: 0 };
  };
  for (const [host, pages] of byHost) {
    if (pages.length > maxPages) {
      for (let i = 0; i < pages.length; i += maxPages) slices.push({ pages: pages.slice(i, i + maxPages), hosts: 1, splitHost: host });
      continue;
    }
    if (open.pages.length + pages.length > maxPages) close();
    open.pages.push(...pages);
    open.hosts += 1;
  }
  close();
  return slices;
}

/**
 * Slots (hosts at once) each slice gets: with no more slices than `parallelism`, all run at once
 * and the slots go out in proportion to their hosts (each at least 1, none more than its hosts);
 * with more, each gets 1 and `parallelism` of them run at a time. The sum never exceeds
 * `parallelism`.
 */
export function sliceSlots(hostsPerSlice: readonly number[], parallelism: number): number[] {
  if (!Number.isInteger(parallelism) || parallelism < 1) throw new RangeError(`parallelism must be an integer ≥ 1, got ${parallelism}`);
  const n = hostsPerSlice.length;
  if (n === 0) return [];
  if (n >= parallelism) return hostsPerSlice.map(() => 1);
  const slots = hostsPerSlice.map(() => 1);
  let left = parallelism - n;
  // hand out the rest one at a time to the slice with the most hosts per slot that can use one
  while (left > 0) {
    let best = -1;
    for (let i = 0; i < n; i++) {
      if (slots[i]! >= hostsPerSlice[i]!) continue;
      if (best === -1 || hostsPerSlice[i]! / slots[i]! > hostsPerSlice[best]! / slots[best]!) best = i;
    }
    if (best === -1) break;
    slots[best] = slots[best]! + 1;
    left -= 1;
  }
  return slots;
}
