// The page index: one document per page line of a WACZ's pages/pages.jsonl. Title and text go in
// exactly as BrowserHive wrote them and are analysed with the built-in `cjk` analyzer (bigrams for
// CJK, standard tokens otherwise), which ships in analysis-common and needs no plugin. No org, no
// permission and no owner is ever written here: the index is not an authority on authorization.
// Each page does carry the crawl its archive came from (crawlId, the ledger's
// capture_submissions.crawl_id): a fact about the archive, like archiveId, that lets a search ask
// only for the crawls OpenFGA says the caller reaches. It narrows what is read and never grants:
// every hit shown still passes can_view.
// Changing the analyzer or the mapping is cheap: delete the index and run
// `UPDATE archives SET indexed_at = NULL`, then index again.
import type { SearchIndex } from './client.ts';

export const INDEX_SETTINGS = {
  number_of_shards: 1,
  // one node locally; a replica wherever a second node exists
  auto_expand_replicas: '0-1',
} as const;

export const INDEX_MAPPINGS = {
  dynamic: 'strict',
  properties: {
    archiveId: { type: 'keyword' },
    /** the crawl the archive was reported for; absent when the ledger has none (or the page was indexed before this field) */
    crawlId: { type: 'keyword' },
    /** the page's position in pages.jsonl (0-based); the document id is `<archiveId>:<position>` */
    position: { type: 'integer', index: false },
    url: { type: 'keyword' },
    title: { type: 'text', analyzer: 'cjk' },
    text: { type: 'text', analyzer: 'cjk' },
    /** BrowserHive's DocumentWithheld, from the archive's manifest (provenance.documentWithheld) */
    textWithheld: { type: 'keyword' },
    capturedAt: { type: 'date' },
    /** the page line's own ts, as written */
    ts: { type: 'keyword', index: false },
  },
} as const;

/** What is stored per page. `text` is absent when the page line had none (withheld, or never written). */
export interface PageDocument {
  archiveId: string;
  crawlId?: string;
  position: number;
  url: string;
  title?: string;
  text?: string;
  textWithheld?: string;
  capturedAt: string;
  ts?: string;
}

export const documentId = (archiveId: string, position: number): string => `${archiveId}:${position}`;

const ensured = new WeakMap<SearchIndex['client'], Set<string>>();

/**
 * Creates the index with the mapping above unless it exists; an index made by an older mapping
 * gains the fields added since (crawlId), so new documents are accepted. Safe to race with
 * another creator.
 */
export async function ensureIndex(search: SearchIndex): Promise<void> {
  const done = ensured.get(search.client) ?? new Set<string>();
  ensured.set(search.client, done);
  if (done.has(search.index)) return;
  const exists = await search.client.indices.exists({ index: search.index });
  if (exists.body) await search.client.indices.putMapping({ index: search.index, body: INDEX_MAPPINGS as never });
  else {
    try {
      await search.client.indices.create({ index: search.index, body: { settings: INDEX_SETTINGS, mappings: INDEX_MAPPINGS } as never });
    } catch (err) {
      if (!String((err as { body?: { error?: { type?: string } } }).body?.error?.type).includes('resource_already_exists')) throw err;
    }
  }
  done.add(search.index);
}

/** Forgets that the index was seen (after it is deleted, so the next indexing creates it again). */
export function forgetIndex(search: SearchIndex): void {
  ensured.get(search.client)?.delete(search.index);
}
