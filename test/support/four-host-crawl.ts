// The crawl the capture-worker tests run: four hosts, each a home page linking four pages, crawled
// to depth 1 with all four hosts at once and 300 ms owed between a host's requests.
import { linkedPagesSite, type Site } from './site.ts';

export const FOUR_HOST_ORG = 'acme';
const HOSTS = ['a', 'b', 'c', 'd'];
const PATHS = ['/p1', '/p2', '/p3', '/p4'];

/** The site's hosts, for useLiveCrawlStack. */
export const fourHostSite = () => linkedPagesSite(HOSTS, PATHS);

/** Every page of the site, sorted: what the crawl archives. */
export const fourHostPages = (site: Pick<Site, 'url'>): string[] => HOSTS.flatMap((h) => ['/', ...PATHS].map((p) => site.url(h, p))).sort();

/** The crawl's request body. */
export const fourHostCrawl = (site: Pick<Site, 'url'>) => ({
  seeds: HOSTS.map((h) => site.url(h, '/')),
  maxDepth: 1,
  maxPages: 100,
  perHostDelayMs: 300,
  hostParallelism: 4,
});
