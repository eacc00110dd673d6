// The whole crawl machinery for one test file, for real (a preset of the harness): a test
// database and OpenFGA store, the dev issuer (JWTs), a multi-host test site, the reference capture
// flow (Chromium), the API and a Temporal worker on a task queue of its own, with `alice` a
// submitter of `org`. The flow can be killed mid-level and another started on the same port
// (restartFlow), as a restarted process would be.
import { startHarness, useHarness, type Harness, type HarnessOptions } from './harness.ts';
import type { SiteHostSpec } from './site.ts';

type LiveCrawlHarnessOptions = HarnessOptions & { issuer: true; crawls: 'flow'; site: { hosts: Record<string, SiteHostSpec> } };

export type LiveCrawlStack = Harness<LiveCrawlHarnessOptions>;

export interface LiveCrawlOptions {
  hosts: Record<string, SiteHostSpec>;
  /** submitter granted on this organization as `alice` */
  org: string;
  env?: Record<string, string>;
  flow?: HarnessOptions['flow'];
}

function liveCrawl(opts: LiveCrawlOptions): LiveCrawlHarnessOptions {
  return { issuer: true, crawls: 'flow', site: { hosts: opts.hosts }, env: opts.env, flow: opts.flow, grants: [['alice', 'submitter', opts.org]] };
}

export function startLiveCrawlStack(opts: LiveCrawlOptions): Promise<LiveCrawlStack> {
  return startHarness(liveCrawl(opts));
}

/** The live crawl stack for one test file (useHarness); `opts` may be a function called in beforeAll. */
export function useLiveCrawlStack(opts: LiveCrawlOptions | (() => Promise<LiveCrawlOptions>)): LiveCrawlStack {
  return useHarness(typeof opts === 'function' ? async () => liveCrawl(await opts()) : liveCrawl(opts));
}
