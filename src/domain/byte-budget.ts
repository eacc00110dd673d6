// Bytes shared by readers running at once. A page's subresources are read concurrently, and each
// used to be bounded only by what the page had left when it started: twenty 90 MiB responses
// begun together could each buffer up to the page's 100 MiB before the first was counted. Each
// reader now takes every chunk from one budget as it reads it, and gives back what it does not
// keep, so the page never holds more than its budget at once. Pure.

export class ByteBudget {
  readonly limit: number;
  #taken = 0;

  constructor(limit: number) {
    if (!Number.isSafeInteger(limit) || limit < 0) throw new RangeError(`a byte budget must be a whole number ≥ 0, got ${limit}`);
    this.limit = limit;
  }

  /** bytes held now: kept, or being read */
  get taken(): number {
    return this.#taken;
  }

  /** Takes `n` bytes if they fit; false (and nothing taken) if they would cross the limit. */
  take(n: number): boolean {
    checkCount(n);
    if (this.#taken + n > this.limit) return false;
    this.#taken += n;
    return true;
  }

  /** Gives back `n` bytes taken before (a body that failed, or was read and not kept). */
  give(n: number): void {
    checkCount(n);
    if (n > this.#taken) throw new RangeError(`gave back ${n} bytes, but only ${this.#taken} are taken`);
    this.#taken -= n;
  }
}

function checkCount(n: number): void {
  if (!Number.isSafeInteger(n) || n < 0) throw new RangeError(`a byte count must be a whole number ≥ 0, got ${n}`);
}
