// What a capture's warcinfo says about how it was made: the browser, the worker, the crawl's
// settings as this page got them, and what robots.txt said.
import type { RobotsRules } from '../../domain/robots.ts';
import type { PackageInput, Visit } from '../capture.ts';
import { BEHAVIORS_LIBRARY } from '../browser/behaviors.ts';
import type { CaptureBrowser } from '../browser/launch.ts';
import type { CapturePageInput } from './types.ts';

export async function captureProvenance(
  browser: CaptureBrowser,
  software: string,
  input: CapturePageInput,
  rules: RobotsRules,
  visit: Visit,
): Promise<NonNullable<PackageInput['provenance']>> {
  return {
    browser: await browser.version().catch(() => 'Chromium (version unknown)'),
    worker: software,
    settings: {
      crawlId: input.crawlId,
      depth: input.depth,
      formats: input.formats,
      signing: input.signing,
      perHostDelayMs: input.delayMs,
      follow: input.follow,
      attempt: input.attempt,
      behaviors: behaviorProvenance(input, visit),
    },
    robots: rules.crawlDelayMs !== undefined ? `allowed (Crawl-delay ${rules.crawlDelayMs} ms)` : 'allowed',
  };
}

/** The behaviors as the warcinfo states them: what the crawl asked for and what the page got. */
function behaviorProvenance(input: CapturePageInput, visit: Visit): Record<string, unknown> {
  const asked = input.behaviors ?? { seconds: 0, siteSpecific: false };
  const got = visit.kind === 'rendered' ? visit.behaviors : undefined;
  return {
    library: BEHAVIORS_LIBRARY,
    seconds: asked.seconds,
    siteSpecific: asked.siteSpecific,
    ...(asked.seconds > 0 ? { enabled: ['autoscroll', 'autoplay', 'autofetch', ...(asked.siteSpecific ? ['siteSpecific'] : [])] } : {}),
    ...(got !== undefined
      ? { budgetMs: got.budgetMs, ...(got.run ? { ranMs: got.run.ms, finished: got.run.finished, frames: got.run.frames, rounds: got.run.rounds } : {}) }
      : {}),
  };
}
