// harness: not used because it tests the capture flow's archives alone (the flow, a test site, S3), with no ledger.
// A WACZ of this project read by the field's own tools, not by its own parser (issue 31, item 4):
// py-wacz validates it (`wacz validate`), warcio checks every record (`warcio check`), and pywb,
// the reference open-source replay, unpacks it (`wb-manager add --unpack-wacz`), indexes it with
// its own canonicaliser and replays its seed page. The page is captured by the real flow in real
// Chromium from a site on an IP host with a port, at a URL whose query arguments are unsorted, so
// every rule of the canonical SURT is exercised: pywb's keys must equal the WACZ's own.
// The tools come from PyPI into .tools/archive-tools (tools.json, profile test; npm test asks).
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LevelReportBody, Manifest } from '../../src/domain/contract.ts';
import { readWacz, type WaczContents } from '../../src/domain/wacz/read.ts';
import { run, startWayback, TOOLS } from '../support/archive-tools.ts';
import { startFlowAlone, type FlowAlone } from '../support/flow-alone.ts';
import { dispatchTo } from '../support/report-receiver.ts';
import { realisticAssets, realisticPage, startSite, type Site } from '../support/site.ts';

const TOKEN = 'archive-readers-test-token';
const MARKER = 'Read back by the archive readers';
const SEED_PATH = '/docs/page?b=1&a=2';

let alone: FlowAlone;
let site: Site;
let dir: string;
let waczPath: string;
let wacz: WaczContents;
let seed: string;

async function capture(url: string): Promise<Buffer> {
  const body = dispatchTo(alone.receiver.url, { perHostDelayMs: 0, formats: ['wacz'], pages: [{ url, follow: false }] });
  const level = await alone.dispatch(body, 90_000);
  const report = level.report as LevelReportBody;
  expect(report.pages[0]!.status).toBe('captured');
  const manifest = JSON.parse((await alone.getObject(report.pages[0]!.manifestKey!)).toString('utf8')) as Manifest;
  return alone.getObject(manifest.artifacts.find((a) => a.format === 'wacz')!.key);
}

beforeAll(async () => {
  expect(existsSync(`${TOOLS}wb-manager`), 'pywb in .tools/archive-tools: npm test installs it (npm run tools -- --profile test)').toBe(true);
  alone = await startFlowAlone(TOKEN);
  site = await startSite({
    hosts: { a: { pages: { ...realisticAssets(), [SEED_PATH]: realisticPage({ title: 'Docs page', scriptLinks: [], scriptText: MARKER }) } } },
  });
  seed = site.url('a', SEED_PATH);
  dir = mkdtempSync(join(tmpdir(), 'archive-readers-'));
  waczPath = join(dir, 'capture.wacz');
  const bytes = await capture(seed);
  writeFileSync(waczPath, bytes);
  wacz = await readWacz(bytes);
}, 180_000);

afterAll(async () => {
  await alone?.close();
  await site?.close();
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
});

describe('a captured WACZ, read by the field’s own tools', { timeout: 120_000 }, () => {
  it('the seed is on an IP host with a port, at a URL with unsorted query arguments', () => {
    expect(new URL(seed).hostname).toMatch(/^127\.\d+\.\d+\.\d+$/);
    expect(new URL(seed).port).not.toBe('');
    expect(new URL(seed).search).toBe('?b=1&a=2');
  });

  it('py-wacz validates it', async () => {
    const { stdout, stderr } = await run(`${TOOLS}wacz`, ['validate', '-f', waczPath]);
    expect(`${stdout}${stderr}`).not.toMatch(/error|invalid|fail/i);
  });

  it('warcio checks every record of its WARC', async () => {
    const warcs = [...wacz.entries.keys()].filter((k) => k.startsWith('archive/') && (k.endsWith('.warc') || k.endsWith('.warc.gz')));
    expect(warcs.length).toBeGreaterThan(0);
    for (const name of warcs) {
      const file = join(dir, name.replace(/\//g, '_'));
      writeFileSync(file, wacz.entries.get(name)!.data);
      const { stdout } = await run(`${TOOLS}warcio`, ['check', '-v', file]);
      // -v names every record it checked; a failed digest makes warcio exit non-zero (run throws)
      expect(stdout).toMatch(/digest pass/);
      expect(stdout).not.toMatch(/digest (failed|fail)/i);
    }
  });

  it('pywb indexes it under the same canonical SURT keys as the WACZ, and replays the seed page', async () => {
    const root = join(dir, 'pywb');
    await run('mkdir', ['-p', root]);
    await run(`${TOOLS}wb-manager`, ['init', 'captures'], { cwd: root });
    await run(`${TOOLS}wb-manager`, ['add', '--unpack-wacz', 'captures', waczPath], { cwd: root });
    const indexDir = join(root, 'collections', 'captures', 'indexes');
    const pywbKeys = readdirSync(indexDir)
      .filter((f) => f.endsWith('.cdxj'))
      .flatMap((f) => readFileSync(join(indexDir, f), 'utf8').trim().split('\n'))
      .map((line) => line.split(' ').slice(0, 2).join(' '));
    const ownIndex = (wacz.entries.get('indexes/index.cdx') ?? wacz.entries.get('indexes/index.cdxj'))!.data.toString('utf8');
    const ownKeys = ownIndex
      .trim()
      .split('\n')
      .map((line) => line.split(' ').slice(0, 2).join(' '));
    expect(new Set(pywbKeys)).toEqual(new Set(ownKeys));
    // the seed's own key: IP reversed, port kept, arguments sorted, as pywb canonicalises
    const ip = new URL(seed).hostname.split('.').reverse().join(',');
    expect(ownKeys).toContainEqual(expect.stringMatching(new RegExp(`^${ip}:${new URL(seed).port}\\)/docs/page\\?a=2&b=1 \\d{14}$`)));

    const wayback = await startWayback(root);
    try {
      const stamp = ownKeys.find((k) => k.includes('/docs/page'))!.split(' ')[1]!;
      const raw = await fetch(`${wayback.origin}/captures/${stamp}id_/${seed}`);
      expect(raw.status).toBe(200);
      const html = await raw.text();
      expect(html).toContain('<title>Docs page</title>');
      expect(html).toContain(MARKER);
      // and its stylesheet, looked up by pywb's canonical key
      const css = await fetch(`${wayback.origin}/captures/${stamp}id_/${site.url('a', '/assets/site.css')}`);
      expect(css.status).toBe(200);
      expect(await css.text()).toContain('font-family: "TestMono"');
    } finally {
      wayback.child.kill();
    }
  });
});
