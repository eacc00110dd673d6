// A level's pages cut into parts for Temporal. The receiver hands a dispatch to the level workflow
// as workflow input and signal payloads, and Temporal refuses a payload over 2 MB (and a request
// over 4 MB; signal-with-start carries the input twice): a level of 20,000 pages of 120-character
// URLs is 2.5 MB. So the pages go in parts of at most DISPATCH_PART_BYTES, the first with the
// level's input, the rest as signals, and the level workflow puts them back together in order.
// Pure.

/** The most JSON bytes of pages one part carries: well under Temporal's 512 KB payload warning. */
export const DISPATCH_PART_BYTES = 256 * 1024;

/**
 * `pages` in order, cut so that each part's pages serialise to at most `maxBytes` (as a JSON array);
 * a page larger than that alone is a part of its own. Always at least one part (empty for no pages).
 */
export function splitPages<T>(pages: readonly T[], maxBytes: number = DISPATCH_PART_BYTES): T[][] {
  if (!Number.isInteger(maxBytes) || maxBytes < 2) throw new RangeError(`maxBytes must be an integer ≥ 2, got ${maxBytes}`);
  const parts: T[][] = [[]];
  let bytes = 2; // []
  for (const page of pages) {
    const size = Buffer.byteLength(JSON.stringify(page)) + 1; // and its comma
    const open = parts[parts.length - 1]!;
    if (open.length > 0 && bytes + size > maxBytes) {
      parts.push([page]);
      bytes = 2 + size;
    } else {
      open.push(page);
      bytes += size;
    }
  }
  return parts;
}

/** The parts of a dispatch the level workflow has so far, put back together once all are in. */
export class DispatchAssembly<T> {
  readonly id: string;
  private readonly parts: (readonly T[] | undefined)[];
  private missing: number;

  constructor(id: string, count: number) {
    if (!Number.isInteger(count) || count < 1) throw new RangeError(`a dispatch has at least one part, got ${count}`);
    this.id = id;
    this.parts = new Array<readonly T[] | undefined>(count);
    this.missing = count;
  }

  /** Part `index`; a part heard again is ignored. True once every part is in. */
  add(index: number, pages: readonly T[]): boolean {
    if (!Number.isInteger(index) || index < 0 || index >= this.parts.length) throw new RangeError(`part ${index} of a dispatch of ${this.parts.length}`);
    if (this.parts[index] === undefined) {
      this.parts[index] = pages;
      this.missing -= 1;
    }
    return this.missing === 0;
  }

  get complete(): boolean {
    return this.missing === 0;
  }

  /** The pages in order; only once complete. */
  pages(): T[] {
    if (!this.complete) throw new Error(`dispatch ${this.id}: ${this.missing} of ${this.parts.length} parts missing`);
    return this.parts.flatMap((p) => [...p!]);
  }
}
