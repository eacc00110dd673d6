// The address policy's cost where it runs most: admission checks every link it reads (the
// parsed link, checkParsedUrl; seeds and targets as text, checkUrl), and selectLinks reads up to
// 10,000 links of a page. One record per measurement.
//   npm run bench -- address-policy
import { checkParsedUrl, checkUrl, createAddressPolicy, parseAllowlist } from '../src/domain/address-policy.ts';
import { selectLinks } from '../src/domain/links.ts';
import { load1Now } from './support-figures.ts';

const URLS = 100_000;

export function run(): Record<string, unknown>[] {
  const load1 = load1Now();
  const policy = createAddressPolicy(parseAllowlist('127.0.0.2/31,127.0.0.4/30,site.test:3000'), [5432, 7233, 8080, 8333]);
  // one in ten aims inside (refused), the rest are ordinary names
  const urls = Array.from({ length: URLS }, (_, i) => (i % 10 === 0 ? `http://127.0.0.1:8333/x${i}` : `https://www${i % 97}.example.com/p${i}?q=${i}`));
  for (const u of urls.slice(0, 5000)) checkUrl(policy, u); // warm up
  let t = performance.now();
  let refused = 0;
  for (const u of urls) if (checkUrl(policy, u) !== undefined) refused++;
  const checkMs = performance.now() - t;

  const page = { url: 'https://www.example.com/', links: urls.map((href) => ({ href })) };
  t = performance.now();
  const sel = selectLinks([{ action: 'follow', pattern: 'any' }], [page.url], [page], { refuse: (u) => checkParsedUrl(policy, u) });
  const selectMs = performance.now() - t;
  return [
    { bench: 'address-policy', what: 'checkUrl', urls: URLS, refused, ms: Math.round(checkMs), usPerUrl: +((checkMs * 1000) / URLS).toFixed(2), load1 },
    {
      bench: 'address-policy',
      what: 'selectLinks, one page of 100,000 links (10,000 read)',
      candidates: sel.candidates.length,
      refused: Object.fromEntries(sel.refused.map((r) => [r.code, r.urls])),
      ms: Math.round(selectMs),
      load1,
    },
  ];
}
