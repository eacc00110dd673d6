// One bulk request of prepared page documents, and what OpenSearch said of each. A request the
// node refuses whole, as over its http.max_content_length (413) or its indexing pressure limit
// (429 rejected_execution: all bulks in flight on the node may hold at most 10% of its heap), is
// split in halves until the parts go through. A single document refused as too large (413) is its
// archive's fault; one refused for pressure (429), alone or as an item of a request the node took,
// is sent again after short pauses, and left for the next run when the node is still pressed.
// Anything else that fails the whole request (the node down) throws: nothing is judged on it.
import { setTimeout as pause } from 'node:timers/promises';
import type { SearchIndex } from './client.ts';
import { bulkItemFailure, type IndexFailure } from './index-failure.ts';

/** One page document as it goes into a bulk body: its action and source lines. */
export interface BulkEntry {
  /** the document's _id */
  id: string;
  archiveId: string;
  position: number;
  /** `{"index":…}\n{…}\n` */
  ndjson: string;
  bytes: number;
}

export function bulkEntry(index: string, id: string, doc: { archiveId: string; position: number }): BulkEntry {
  const ndjson = `${JSON.stringify({ index: { _index: index, _id: id } })}\n${JSON.stringify(doc)}\n`;
  return { id, archiveId: doc.archiveId, position: doc.position, ndjson, bytes: Buffer.byteLength(ndjson) };
}

interface BulkItem {
  _id?: string;
  status?: number;
  error?: { type?: string; reason?: string };
}

/**
 * Pauses before a document refused for pressure (429) is sent again. The pressure is the other
 * bulks in flight on the node, gone once they are indexed: under the full test suite's load, 3 of
 * 18 documents of 6 MB were left for the next run without them. At most 5.25 s a document.
 */
export const PRESSURE_PAUSES_MS: readonly number[] = [250, 1_000, 4_000];

const statusOf = (err: unknown): number | undefined => (err as { meta?: { statusCode?: number } }).meta?.statusCode;

type Refused = (archiveId: string, failure: IndexFailure) => void;

/** Sends `batch`; calls `refused` once per document OpenSearch did not take. `pauses`: PRESSURE_PAUSES_MS. */
export async function sendBulk(search: SearchIndex, batch: BulkEntry[], refused: Refused, pauses: readonly number[] = PRESSURE_PAUSES_MS): Promise<void> {
  if (batch.length === 0) return;
  let items: Record<string, BulkItem>[];
  try {
    // the body is sent as the NDJSON measured (the client passes a string through; its types say array only)
    const body = batch.map((e) => e.ndjson).join('') as never;
    const res = await search.client.bulk({ body, filter_path: ['errors', 'items.*.error', 'items.*._id', 'items.*.status'] });
    if (!res.body.errors) return;
    items = (res.body.items ?? []) as Record<string, BulkItem>[];
  } catch (err) {
    const status = statusOf(err);
    if (status !== 413 && status !== 429) throw err;
    return refusedWhole(search, batch, refused, pauses, { status, message: (err as Error).message });
  }
  // documents the shard refused for pressure, the rest of the request taken: those go again
  const pressed = refusedItems(batch, items, refused, pauses.length > 0);
  if (pressed.length > 0) {
    await pause(pauses[0]);
    await sendBulk(search, pressed, refused, pauses.slice(1));
  }
}

/** Calls `refused` for each item OpenSearch refused, but returns those refused for pressure (429) when they may go again. */
function refusedItems(batch: BulkEntry[], items: Record<string, BulkItem>[], refused: Refused, again: boolean): BulkEntry[] {
  const pressed: BulkEntry[] = [];
  const byId = new Map(batch.map((e) => [e.id, e]));
  for (const item of items) {
    const op = Object.values(item)[0];
    if (op?.error === undefined || op._id === undefined) continue;
    const entry = byId.get(op._id);
    if (again && op.status === 429 && entry !== undefined) pressed.push(entry);
    else refusedItem(op._id, op.status, op.error, refused);
  }
  return pressed;
}

function refusedItem(id: string, status: number | undefined, error: { type?: string; reason?: string }, refused: Refused): void {
  const cut = id.lastIndexOf(':');
  refused(id.slice(0, cut), bulkItemFailure(Number(id.slice(cut + 1)), status, error));
}

/** A request the node refused whole: split in halves; a lone document paused for and sent again (429), or refused. */
async function refusedWhole(
  search: SearchIndex,
  batch: BulkEntry[],
  refused: Refused,
  pauses: readonly number[],
  answer: { status: 413 | 429; message: string },
): Promise<void> {
  if (batch.length > 1) {
    const half = Math.ceil(batch.length / 2);
    await sendBulk(search, batch.slice(0, half), refused, pauses);
    await sendBulk(search, batch.slice(half), refused, pauses);
    return;
  }
  if (answer.status === 429 && pauses.length > 0) {
    await pause(pauses[0]);
    return sendBulk(search, batch, refused, pauses.slice(1));
  }
  const e = batch[0]!;
  const what = answer.status === 413 ? 'as too large (413)' : `for now (429: ${answer.message.slice(0, 300)})`;
  refused(e.archiveId, {
    error: new Error(`OpenSearch refused page ${e.position} ${what}: its document is ${e.bytes} bytes`),
    permanent: answer.status === 413,
  });
}
