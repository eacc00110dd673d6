// harness: not used because it tests fga/model.fga by itself: with the fga CLI and no server, then on a store of its own.
// fga/model.fga and its assertions. `npm run fga:test` runs fga/model.fga.yaml with the fga CLI
// and no server; it has to pass, and it has to fail when an expectation is wrong. The same
// assertions are then asked of the real OpenFGA server the API uses, with every test's own tuples
// (the membership ones above all) passed as contextual tuples, the way the API passes them.
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConsistencyPreference } from '@openfga/sdk';
import { parse, parseDocument } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT } from '../support/env.ts';
import { createTestStore, type TestStore } from '../support/fga.ts';

interface TupleSpec {
  user: string;
  relation: string;
  object: string;
  condition?: { name: string; context?: Record<string, unknown> };
}
interface CheckSpec {
  user: string;
  object: string;
  context?: Record<string, unknown>;
  assertions: Record<string, boolean>;
}
interface TestSpec {
  name: string;
  tuples?: TupleSpec[];
  check: CheckSpec[];
}
interface TestFile {
  model_file: string;
  tuples: TupleSpec[];
  tests: TestSpec[];
}

const YAML_PATH = join(ROOT, 'fga/model.fga.yaml');
const spec = parse(readFileSync(YAML_PATH, 'utf8')) as TestFile;

function fgaTest(file?: string): { status: number | null; output: string } {
  const r = spawnSync(process.execPath, [join(ROOT, 'scripts/fga-test.mjs'), ...(file ? [file] : [])], { encoding: 'utf8', timeout: 60_000 });
  return { status: r.status, output: `${r.stdout}${r.stderr}` };
}

describe('the assertion file', () => {
  it('holds the seven viewing questions, 5 and 6 on the identical tuple differing only in current_time', () => {
    const viewing = spec.tests.filter((x) => /^[1-7] /.test(x.name));
    expect(viewing.map((x) => x.name.slice(0, 1))).toEqual(['1', '2', '3', '4', '5', '6', '7']);
    const [five, six] = [viewing[4]!, viewing[5]!];
    expect(five.tuples).toEqual(six.tuples);
    expect(five.tuples).toHaveLength(1);
    expect(five.tuples![0]!.condition?.name).toBe('non_expired_grant');
    expect(five.check).toHaveLength(1);
    expect(six.check).toHaveLength(1);
    const { context: c5, ...rest5 } = five.check[0]!;
    const { context: c6, ...rest6 } = six.check[0]!;
    expect({ ...rest5, assertions: undefined }).toEqual({ ...rest6, assertions: undefined });
    expect(Object.keys(c5!)).toEqual(['current_time']);
    expect(Object.keys(c6!)).toEqual(['current_time']);
    expect(c5!.current_time).not.toBe(c6!.current_time);
    expect(five.check[0]!.assertions).toEqual({ can_view: true });
    expect(six.check[0]!.assertions).toEqual({ can_view: false });
  });

  it('holds the starting side: submitter and admin for their organization only, member never', () => {
    const starting = spec.tests.flatMap((x) => x.check.filter((c) => 'can_submit' in c.assertions).map((c) => ({ test: x, check: c })));
    const allowed = starting.filter((s) => s.check.assertions.can_submit).map((s) => s.test.tuples?.[0]?.relation);
    expect(allowed.sort()).toEqual(['admin', 'submitter']);
    const denied = starting.filter((s) => !s.check.assertions.can_submit);
    expect(denied.some((s) => s.test.tuples?.some((t) => t.relation === 'member') && s.check.object === 'organization:acme')).toBe(true);
    expect(denied.some((s) => s.test.tuples?.[0]?.relation === 'submitter' && s.check.object === 'organization:other')).toBe(true);
    expect(denied.some((s) => s.test.tuples?.[0]?.relation === 'admin' && s.check.object === 'organization:other')).toBe(true);
  });
});

describe('npm run fga:test (fga CLI, no server)', () => {
  const dirs: string[] = [];
  afterAll(() => {
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  it('passes on fga/model.fga.yaml', () => {
    const r = fgaTest();
    expect(r.output).not.toMatch(/FAILED/);
    expect(r.status).toBe(0);
  });

  /** The assertion file with one expectation flipped, beside a copy of the model. */
  function broken(testName: string, relation: string): string {
    const dir = mkdtempSync(join(tmpdir(), 'fga-test-'));
    dirs.push(dir);
    copyFileSync(join(ROOT, 'fga/model.fga'), join(dir, 'model.fga'));
    const doc = parseDocument(readFileSync(YAML_PATH, 'utf8'));
    const tests = doc.toJS().tests as TestSpec[];
    const i = tests.findIndex((x) => x.name === testName);
    expect(i).toBeGreaterThanOrEqual(0);
    const path = ['tests', i, 'check', 0, 'assertions', relation];
    const was = doc.getIn(path);
    expect(typeof was).toBe('boolean');
    doc.setIn(path, !was);
    const file = join(dir, 'model.fga.yaml');
    writeFileSync(file, doc.toString());
    return file;
  }

  it('fails (non-zero) when one viewing expectation is wrong: a lapsed share said to be visible', () => {
    const r = fgaTest(broken('6 the same share has lapsed after its window', 'can_view'));
    expect(r.status).not.toBe(0);
    expect(r.output).toMatch(/FAILED/);
  });

  it('fails (non-zero) when one starting expectation is wrong: a member said to be able to start', () => {
    const r = fgaTest(broken('a member may not start crawls, and a member tuple from the token grants nothing', 'can_submit'));
    expect(r.status).not.toBe(0);
  });

  it('fails when the file does not exist', () => {
    expect(fgaTest(join(tmpdir(), 'no-such-assertions.yaml')).status).not.toBe(0);
  });
});

describe('the same assertions on the real server, test tuples as contextual tuples', () => {
  let store: TestStore;
  beforeAll(async () => {
    store = await createTestStore();
    await store.client.write({ writes: spec.tuples });
  });

  const cases = spec.tests.flatMap((test) =>
    test.check.flatMap((check) =>
      Object.entries(check.assertions).map(([relation, expected]) => ({
        name: `${test.name}: ${check.user} ${relation} ${check.object} → ${expected}`,
        test,
        check,
        relation,
        expected,
      })),
    ),
  );

  it.each(cases)('$name', async ({ test, check, relation, expected }) => {
    const res = await store.client.check(
      {
        user: check.user,
        relation,
        object: check.object,
        contextualTuples: test.tuples ?? [],
        context: check.context ?? { current_time: new Date().toISOString() },
      },
      { consistency: ConsistencyPreference.HigherConsistency },
    );
    expect(res.allowed).toBe(expected);
  });

  it('nothing but the world tuples is stored (the test tuples were only ever contextual)', async () => {
    const r = await store.client.read();
    expect(r.tuples).toHaveLength(spec.tuples.length);
  });
});
