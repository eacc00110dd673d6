// tools.json is the one file with the servers' versions (and Node's); scripts/tools.mjs builds from it.
import { existsSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { atLeast, enginesMinimum, nodePin, scriptCommand } from '../../scripts/lib/node.mjs';
import { PROFILES, SEARCH_ATTRIBUTES, SERVICES } from '../../scripts/lib/services.mjs';
import { SEARCH_ATTRIBUTES as WORKFLOW_SEARCH_ATTRIBUTES } from '../../temporal.config.ts';

interface Pin {
  kind: string;
  module?: string;
  version?: string;
  package?: string;
  upgrade?: string[];
  artifacts?: string[];
  launcher?: string;
  packages?: string[];
  profile?: string;
  why: string;
}
const root = new URL('../../', import.meta.url);
const pins = (JSON.parse(readFileSync(new URL('tools.json', root), 'utf8')) as { tools: Record<string, Pin> }).tools;

describe('tools.json', () => {
  it('pins every Go tool to an exact module version and a package inside it', () => {
    const go = Object.entries(pins).filter(([, p]) => p.kind === 'go');
    expect(go.map(([n]) => n).sort()).toEqual(['fga', 'openfga', 'temporal', 'weed']);
    for (const [name, p] of go) {
      expect(p.module, name).toMatch(/^github\.com\/[\w.-]+\/[\w.-]+$/);
      expect(p.version, name).toMatch(/^v\d+\.\d+\.\d+(-[\w.-]+)?$/);
      expect(p.package, name).toMatch(/^\.\/[\w/.-]+$/);
      for (const u of p.upgrade ?? []) expect(u, name).toMatch(/^[\w./-]+@v\d+\.\d+\.\d+$/);
      expect(p.why.length, name).toBeGreaterThan(10);
    }
    // the fga CLI's openfga upgrade is the server version the stack runs
    expect(pins.fga!.upgrade).toEqual([`${pins.openfga!.module}@${pins.openfga!.version}`]);
  });

  it('builds OpenSearch 2.19.x from Maven artifacts only under the search profile', () => {
    const os = pins.opensearch!;
    expect(os.kind).toBe('maven-java');
    expect(PROFILES).toContain(os.profile);
    expect(SERVICES.find((s) => s.name === 'opensearch')?.profile).toBe(os.profile);
    for (const a of os.artifacts!) expect(a).toMatch(/^[\w.-]+:[\w.-]+:\d+\.\d+\.\d+$/);
    const opensearch = os.artifacts!.filter((a) => a.startsWith('org.opensearch'));
    expect(opensearch.map((a) => a.split(':')[1]).sort()).toEqual(['analysis-common', 'opensearch', 'transport-netty4-client']);
    expect(new Set(opensearch.map((a) => a.split(':')[2]))).toEqual(new Set(['2.19.6']));
    expect(existsSync(new URL(os.launcher!, root))).toBe(true);
  });

  it("pins the field's archive readers to exact PyPI versions, installed for the tests only", () => {
    const readers = pins['archive-tools']!;
    expect(readers.kind).toBe('pypi');
    expect(readers.profile).toBe('test');
    expect(readers.packages!.map((p) => p.split('==')[0]).sort()).toEqual(['pywb', 'wacz', 'warcio']);
    for (const p of readers.packages!) expect(p).toMatch(/^[\w-]+==\d+\.\d+\.\d+$/);
    expect(readFileSync(new URL('scripts/test.mjs', root), 'utf8')).toMatch(/new Set\(\['search', 'test'\]\)/);
  });

  it('pins Node to an exact 24.x LTS release that package.json engines accepts, and runs on it', () => {
    const pin = nodePin();
    expect(pin.kind).toBe('node');
    expect(pin.version).toMatch(/^24\.\d+\.\d+$/);
    expect(pin.package).toBe(`node-${process.platform}-${process.arch}`);
    const min = enginesMinimum();
    expect(min[0]).toBe(24);
    expect(atLeast(pin.version, min)).toBe(true);
    // the test run itself is on a node engines accepts (npm test brings the pin when needed)
    expect(atLeast(process.version, min)).toBe(true);
  });

  it('compares versions numerically, part by part', () => {
    expect(atLeast('v24.11.0', [24, 11, 0])).toBe(true);
    expect(atLeast('24.22.3', [24, 11, 0])).toBe(true);
    expect(atLeast('v24.9.9', [24, 11, 0])).toBe(false);
    expect(atLeast('v20.20.2', [24, 11, 0])).toBe(false);
    expect(atLeast('v100.0.0', [24, 11, 0])).toBe(true);
    expect(atLeast('v24.11.1', [24, 11, 2])).toBe(false);
  });

  it('runs every app and command script with plain node through scripts/node, none with a transpiler', () => {
    const scripts = (JSON.parse(readFileSync(new URL('package.json', root), 'utf8')) as { scripts: Record<string, string> }).scripts;
    for (const [name, script] of Object.entries(scripts)) expect(script, name).not.toMatch(/\btsx\b|ts-node|--import|--loader/);
    for (const app of ['api', 'worker', 'flow', 'issuer', 'replay']) {
      const [node, args] = scriptCommand(app);
      expect(node).toBe(process.execPath);
      expect(args.slice(0, 2)).toEqual(['--env-file-if-exists=.env', '--env-file-if-exists=.env.local']);
      expect(args[2]).toBe(`src/${app}/main.ts`);
      expect(existsSync(new URL(args[2]!, root))).toBe(true);
    }
    expect(() => scriptCommand('start')).toThrow(/must be "scripts\/node/);
  });

  it('registers the search attributes the workflows set, as Keyword', () => {
    expect(
      Object.entries(WORKFLOW_SEARCH_ATTRIBUTES)
        .map(([name, type]) => `${name}=${type}`)
        .sort(),
    ).toEqual(SEARCH_ATTRIBUTES.map((n) => `${n}=Keyword`).sort());
  });

  it('names each service once', () => {
    const names = SERVICES.map((s) => s.name);
    expect(new Set(names).size).toBe(names.length);
    for (const s of SERVICES) if (s.profile) expect(PROFILES).toContain(s.profile);
  });
});
