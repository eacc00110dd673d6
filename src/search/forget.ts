// Taking a deleted archive's pages out of the index. Search already drops a hit whose archive is
// not in the ledger, but the documents hold the page's text, and deleting an archive is asking for
// that text to be gone too. The documents are found by their archiveId and deleted by id in one
// bulk request a round (the node the stack runs has no delete-by-query: that is the reindex module).
import type { SearchIndex } from './client.ts';

/** Document ids one round finds and deletes (an archive holds one document a page of its pages.jsonl). */
const ROUND = 1000;

/** Deletes every document of the archive, refreshed so no search finds them after; answers how many went. */
export async function forgetArchive(search: SearchIndex, archiveId: string): Promise<number> {
  let deleted = 0;
  for (;;) {
    const found = await search.client.search({
      index: search.index,
      body: { query: { term: { archiveId } }, size: ROUND, _source: false },
      ignore_unavailable: true,
    });
    const ids = (found.body.hits?.hits ?? []).map((h) => h._id);
    if (ids.length === 0) return deleted;
    const body = ids.map((id) => ({ delete: { _index: search.index, _id: id } }));
    const res = await search.client.bulk({ body, refresh: true, filter_path: ['errors', 'items.*.error'] });
    if (res.body.errors) throw new Error(`OpenSearch refused to delete documents of archive ${archiveId}: ${JSON.stringify(res.body.items?.[0])}`);
    deleted += ids.length;
    if (ids.length < ROUND) return deleted;
  }
}
