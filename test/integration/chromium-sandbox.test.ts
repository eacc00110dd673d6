// harness: not used because it tests Chromium's processes under the capture browser (src/flow) alone, against a test site, with no ledger.
// Chromium keeps its sandbox (issue 25, least privilege). A capture process that is root
// launches Chromium as the capture user, and one already running as that user launches it
// directly; either way every Chromium process runs as a non-root uid, none was told to turn the
// sandbox off, every renderer is under a seccomp filter, and Chromium inherits none of the
// capture process's settings. What each process really is comes
// from /proc, not from Chromium.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CAPTURE_USER, captureUserUid } from '../../scripts/lib/capture-user.mjs';
import { createAddressPolicy, parseAllowlist } from '../../src/domain/address-policy.ts';
import { CaptureBrowser } from '../../src/flow/browser/launch.ts';
import { visitPage } from '../../src/flow/capture.ts';
import { createGuardedFetcher } from '../../src/flow/fetch.ts';
import { CAPTURE_USER_AGENT } from '../../src/flow/version.ts';
import { TEST_SITES_ALLOW } from '../support/config.ts';
import { chromiumBrowsers, descendants, type ProcessInfo } from '../support/processes.ts';
import { startSite, type Site } from '../support/site.ts';

const SANDBOX_OFF = '--no-sandbox';
const RELAUNCHED = 'the first page did not open; opening it once more';
const isRoot = process.getuid?.() === 0;

interface Sandboxing {
  pid: number;
  type: string;
  /** real, effective, saved and filesystem uid */
  uids: number[];
  /** 2: a seccomp filter */
  seccomp: number;
  sandboxOff: boolean;
}

/** What /proc says about one process of a browser tree. */
function sandboxingOf(p: ProcessInfo): Sandboxing {
  const status = readFileSync(`/proc/${p.pid}/status`, 'utf8');
  const cmdline = readFileSync(`/proc/${p.pid}/cmdline`, 'utf8');
  return {
    pid: p.pid,
    type: p.args.find((a) => a.startsWith('--type='))?.slice(7) ?? 'browser',
    uids: /^Uid:\s+(.*)$/m.exec(status)![1]!.trim().split(/\s+/).map(Number),
    seccomp: Number(/^Seccomp:\s+(\d+)$/m.exec(status)![1]),
    sandboxOff: cmdline.includes(SANDBOX_OFF),
  };
}

const treeOf = (browser: ProcessInfo): Sandboxing[] => [browser, ...descendants(browser)].map(sandboxingOf);
const renderers = (tree: Sandboxing[]): Sandboxing[] => tree.filter((p) => p.type === 'renderer');

/** The uid Chromium must run as: the capture user when the capture process is root. */
function expectedUid(): number {
  if (!isRoot) return process.getuid!();
  const uid = captureUserUid();
  expect(uid, `the user ${CAPTURE_USER} (npm test creates it)`).toBeDefined();
  return uid!;
}

async function expectSandboxed(browser: ProcessInfo, uid: number): Promise<void> {
  const tree = treeOf(browser);
  expect(uid).not.toBe(0);
  expect(renderers(tree).length).toBeGreaterThanOrEqual(1);
  for (const p of tree) {
    expect({ pid: p.pid, type: p.type, uids: p.uids, sandboxOff: p.sandboxOff }).toEqual({
      pid: p.pid,
      type: p.type,
      uids: [uid, uid, uid, uid],
      sandboxOff: false,
    });
  }
  // a renderer puts itself under seccomp as it starts: one forked a moment ago may not have yet
  // (seen once in npm test: a renderer at 0), and one that never does keeps this from passing
  await expect
    .poll(() => renderers(treeOf(browser)).flatMap((r) => (r.seccomp === 2 ? [] : [{ pid: r.pid, seccomp: r.seccomp }])), { timeout: 10_000 })
    .toEqual([]);
}

let site: Site;
beforeAll(async () => {
  site = await startSite({
    hosts: {
      a: { pages: { '/': '<title>held open</title><p>a page</p><iframe src="{{b}}/frame"></iframe>' } },
      b: { pages: { '/frame': '<title>frame</title><p>a cross-site frame, in a renderer of its own</p>' } },
    },
  });
});
afterAll(async () => {
  await site?.close();
});

describe('Chromium keeps its sandbox', { timeout: 120_000 }, () => {
  it('launched by this process, every Chromium process of a capture runs as the capture user (as root) with no sandbox switch, and every renderer under seccomp', async () => {
    // a setting of the capture process that Chromium must not inherit
    const canary = `canary-${randomUUID()}`;
    process.env.CAPTURE_SANDBOX_TEST_SECRET = canary;
    const browser = new CaptureBrowser();
    const fetcher = createGuardedFetcher(createAddressPolicy(parseAllowlist(TEST_SITES_ALLOW)));
    try {
      const capture = visitPage(browser, site.url('a', '/'), {
        userAgent: CAPTURE_USER_AGENT,
        fetcher,
        formats: ['wacz'],
        extraMs: 5000,
        deadlineMs: 60_000,
        injectFailure: false,
      });
      await expect.poll(() => site.pageRequests('b').length, { timeout: 30_000 }).toBe(1);
      const flowBrowsers = chromiumBrowsers((args) => args.includes('--proxy-bypass-list=<-loopback>'));
      expect(flowBrowsers).toHaveLength(1);
      // the page and its cross-site frame: two renderers, the frame's once it has loaded
      await expect.poll(() => renderers(treeOf(flowBrowsers[0]!)).length, { timeout: 30_000 }).toBeGreaterThanOrEqual(2);
      await expectSandboxed(flowBrowsers[0]!, expectedUid());
      const environ = readFileSync(`/proc/${flowBrowsers[0]!.pid}/environ`, 'utf8').split('\0');
      expect(environ.some((e) => e.startsWith('PATH='))).toBe(true);
      expect(environ.filter((e) => e.includes(canary) || e.startsWith('CAPTURE_LEDGER_'))).toEqual([]);
      const v = await capture;
      expect(v.kind).toBe('rendered');
      if (v.kind === 'rendered') expect(v.page.title).toBe('held open');
    } finally {
      delete process.env.CAPTURE_SANDBOX_TEST_SECRET;
      await browser.close();
    }
  });

  it('a capture process already running as the capture user launches Chromium itself, sandboxed the same way', async () => {
    const child = startAsCaptureUser();
    // what it says on stderr, to name the cause if it exits before its page is open
    let said = '';
    child.stderr!.setEncoding('utf8').on('data', (s: string) => (said += s));
    try {
      const lines = createInterface({ input: child.stdout! });
      const ready = await new Promise<string>((resolve, reject) => {
        child.once('exit', (code, signal) =>
          reject(new Error(`the capture-user process exited (${code ?? signal}) before its page was open; its stderr:\n${said}`)),
        );
        lines.once('line', resolve);
      });
      expect(ready).toBe('ready');
      if (said.includes(RELAUNCHED)) console.warn(`the capture-user process opened its page at the second try:\n${said}`);
      const self = descendants().find((p) => p.pid === child.pid)!;
      const node = [self, ...descendants(self)].find((p) => p.args[0] === process.execPath)!;
      const flowBrowsers = descendants(node).filter((p) => /(^|\/)chromium$/.test(p.args[0] ?? '') && !p.args.some((a) => a.startsWith('--type=')));
      expect(flowBrowsers).toHaveLength(1);
      expect(sandboxingOf(node).uids).toEqual(Array(4).fill(expectedUid()));
      await expectSandboxed(flowBrowsers[0]!, expectedUid());
    } finally {
      child.stdin!.end('close\n');
      await new Promise((resolve) => (child.exitCode !== null ? resolve(undefined) : child.once('exit', resolve)));
    }
    expect(child.exitCode).toBe(0);
  });
});

/**
 * A node process running as the capture user (through runuser when this one is root, as the
 * capture worker is run) that opens a page in a CaptureBrowser, says "ready" and closes the
 * browser when its stdin ends. It is given no environment beyond PATH. A first page that fails
 * to open is tried once more, as the flow's next capture would, and said on stderr.
 */
function startAsCaptureUser(): ChildProcess {
  const launch = new URL('../../src/flow/browser/launch.ts', import.meta.url).href;
  const code = [
    `import { CaptureBrowser } from ${JSON.stringify(launch)};`,
    `const RELAUNCHED = ${JSON.stringify(RELAUNCHED)};`,
    'const browser = new CaptureBrowser((line) => console.error(line));',
    'const open = async () => {',
    "  const context = await browser.newContext({ userAgent: 'sandbox-test' });",
    "  await (await context.newPage()).setContent('<title>held</title><p>open</p>');",
    '};',
    // as the flow does: a launch that fails is tried again by the next capture (launch.ts)
    'await open().catch((err) => { console.error(`${RELAUNCHED}: ${err.stack}`); return open(); });',
    "console.log('ready');",
    "process.stdin.on('data', () => {}).on('end', async () => { await browser.close(); process.exit(0); });",
  ].join('\n');
  const node = [process.execPath, '--input-type=module', '-e', code];
  const [cmd, ...args] = isRoot ? ['/usr/sbin/runuser', '-u', CAPTURE_USER, '--', ...node] : node;
  return spawn(cmd!, args, { cwd: '/', env: { PATH: process.env.PATH ?? '/usr/bin:/bin' }, stdio: ['pipe', 'pipe', 'pipe'] });
}
