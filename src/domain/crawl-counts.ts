// A crawl's page counts, as the ledger counts them (store/crawls.ts crawlCounts) and
// GET /api/crawls/:id answers them; the picker reads the same fields. Types only: the picker's
// browser code imports this file too.
export interface CrawlCounts {
  /** every distinct page the crawl recorded plus every distinct URL the rules skipped */
  pagesDiscovered: number;
  pagesCaptured: number;
  pagesFailed: number;
  pagesSkipped: number;
  pagesPending: number;
  waczCount: number;
}
