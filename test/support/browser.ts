// The headless Chromium the page-driving tests (picker, replay isolation) launch through
// playwright-core: the system binary, with the flags that keep it from talking to anything but the
// pages under test, and the folder their screenshots go to.
import { mkdirSync } from 'node:fs';
import { chromium, type Browser } from 'playwright-core';
import { ROOT } from './env.ts';

/** what chromium.launch and chromium.launchPersistentContext are given */
export const BROWSER_LAUNCH = {
  executablePath: '/usr/bin/chromium',
  args: [
    '--headless',
    '--no-sandbox',
    '--disable-gpu',
    '--disable-quic',
    '--no-first-run',
    '--disable-background-networking',
    '--disable-component-update',
    '--disable-sync',
  ],
  headless: true,
};

/** where the browser tests leave their screenshots */
export const SHOTS = `${ROOT}test-results/`;

/** A browser launched with BROWSER_LAUNCH, the screenshot folder made first. */
export async function launchTestBrowser(): Promise<Browser> {
  mkdirSync(SHOTS, { recursive: true });
  return chromium.launch(BROWSER_LAUNCH);
}
