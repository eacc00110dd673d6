// The whole crawl machinery for one test file, for real (a preset of the harness): a test
// database and OpenFGA store, the dev issuer (JWTs), a multi-host test site, the reference capture
// flow (Chromium), the API and a Temporal worker on a task queue of its own, with `alice` a
// submitter of `org`. The flow can be killed mid-level and another started on the same port
// (restartFlow), as a restarted process would be.
import { startHarness, useHarness, type Harness, type HarnessOptions } from './harness.ts';
import type { SiteHostSpec } from './site.ts';

type LiveCrawlHarnessOptions<R extends boolean> = HarnessOptions & { issuer: true; crawls: 'flow'; site: { hosts: Record<string, SiteHostSpec> }; replay: R };

/** With `replay: true`, the replay server too (h.replay), the API's CAPTURE_LEDGER_REPLAY_URL. */
export type LiveCrawlStack<R extends boolean = false> = Harness<LiveCrawlHarnessOptions<R>>;

export interface LiveCrawlOptions<R extends boolean = false> {
  hosts: Record<string, SiteHostSpec>;
  /** submitter granted on this organization as `alice` */
  org: string;
  env?: Record<string, string>;
  flow?: HarnessOptions['flow'];
  /** the replay server (h.replay) */
  replay?: R;
}

function liveCrawl<R extends boolean>(opts: LiveCrawlOptions<R>): LiveCrawlHarnessOptions<R> {
  const { hosts, org, env, flow } = opts;
  return { issuer: true, crawls: 'flow', site: { hosts }, env, flow, replay: (opts.replay ?? false) as R, grants: [['alice', 'submitter', org]] };
}

export function startLiveCrawlStack<R extends boolean = false>(opts: LiveCrawlOptions<R>): Promise<LiveCrawlStack<R>> {
  return startHarness(liveCrawl(opts));
}

/** The live crawl stack for one test file (useHarness); `opts` may be a function called in beforeAll. */
export function useLiveCrawlStack<R extends boolean = false>(opts: LiveCrawlOptions<R> | (() => Promise<LiveCrawlOptions<R>>)): LiveCrawlStack<R> {
  return useHarness(typeof opts === 'function' ? async () => liveCrawl(await opts()) : liveCrawl(opts));
}
