// The payloads a crawl has stored, as its workflows keep them (src/domain/wacz/dedup.ts says how
// they are used). No imports: the slice and level workflows run this in Temporal's sandbox.

export const DEDUP_LIMITS = {
  /** a payload shorter than this is stored again: a revisit record costs about as much */
  minPayloadBytes: 512,
  /** the known payloads handed to one capture (each about 300 bytes of Temporal payload) */
  knownPerCapture: 64,
  /** the payloads one capture reports back as stored, largest first */
  storedPerCapture: 64,
  /** the payloads a slice or level keeps; the least used go first */
  indexed: 256,
} as const;

/** A payload stored in full by an earlier capture of the crawl: what a revisit refers to. */
export interface StoredPayload {
  /** `sha256:<hex>`, as WARC-Payload-Digest says */
  digest: string;
  /** WARC-Target-URI and WARC-Date (ISO 8601) of the response record holding it */
  uri: string;
  date: string;
  /** the object key of the WACZ that holds it */
  archiveKey: string;
  /** payload bytes, to prefer the big ones when the list is cut */
  bytes: number;
}

interface Entry {
  payload: StoredPayload;
  uses: number;
  /** insertion order: the first capture to store a digest keeps it */
  seq: number;
}

/**
 * The crawl's known payloads as a workflow keeps them: the first archive to store a digest is the
 * one revisits refer to; a digest seen again counts as used. Bounded by DEDUP_LIMITS.indexed.
 */
export class PayloadIndex {
  private readonly entries = new Map<string, Entry>();
  private seq = 0;

  constructor(initial: readonly StoredPayload[] = []) {
    this.add(initial);
  }

  /** Records payloads stored in full; a digest already known is only counted as used. */
  add(payloads: readonly StoredPayload[]): void {
    for (const p of payloads) {
      const e = this.entries.get(p.digest);
      if (e !== undefined) e.uses += 1;
      else this.entries.set(p.digest, { payload: p, uses: 1, seq: this.seq++ });
    }
    if (this.entries.size > DEDUP_LIMITS.indexed) {
      const keep = this.ranked().slice(0, DEDUP_LIMITS.indexed);
      this.entries.clear();
      for (const e of keep) this.entries.set(e.payload.digest, e);
    }
  }

  /** Counts the payloads a capture referred to (its revisits) as used. */
  used(digests: readonly string[]): void {
    for (const d of digests) {
      const e = this.entries.get(d);
      if (e !== undefined) e.uses += 1;
    }
  }

  /** The n most used (then largest, then first stored) payloads. */
  top(n: number = DEDUP_LIMITS.knownPerCapture): StoredPayload[] {
    return this.ranked()
      .slice(0, n)
      .map((e) => e.payload);
  }

  get size(): number {
    return this.entries.size;
  }

  private ranked(): Entry[] {
    return [...this.entries.values()].sort((a, b) => b.uses - a.uses || b.payload.bytes - a.payload.bytes || a.seq - b.seq);
  }
}
