// Chromium keeps its sandbox (issue 25): nothing in src/ or scripts/ may turn it off or weaken
// it. Chromium takes a switch with one dash or two, so the switch is looked for without them;
// Playwright turns the sandbox off itself unless chromiumSandbox is true.
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../support/env.ts';

const WEAKENING = /no-sandbox|disable-(?:setuid|namespace|seccomp-filter)-sandbox|chromiumSandbox\s*:(?!\s*true\b)/;

function* filesUnder(dir: string): Generator<string> {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, entry.name);
    if (entry.isDirectory()) yield* filesUnder(p);
    else if (entry.isFile()) yield p;
  }
}

describe('the Chromium sandbox', () => {
  it('is turned off or weakened nowhere in src/ and scripts/', () => {
    const files = ['src', 'scripts'].flatMap((d) => [...filesUnder(join(ROOT, d))].map((f) => relative(ROOT, f)));
    expect(files).toContain('src/flow/browser/launch.ts');
    expect(files).toContain('src/flow/browser/chromium-as-capture-user.sh');
    const offending = files.flatMap((f) =>
      readFileSync(join(ROOT, f), 'utf8')
        .split('\n')
        .flatMap((line, i) => (WEAKENING.test(line) ? [`${f}:${i + 1}: ${line.trim()}`] : [])),
    );
    expect(offending).toEqual([]);
  });

  it('the pattern finds each way of turning it off', () => {
    for (const line of [
      'args: ["--no-sandbox"]',
      "'-no-sandbox'",
      '--disable-setuid-sandbox',
      '--disable-namespace-sandbox',
      '--disable-seccomp-filter-sandbox',
      'chromiumSandbox: false',
      'chromiumSandbox: !root',
    ])
      expect(WEAKENING.test(line), line).toBe(true);
    expect(WEAKENING.test('chromiumSandbox: true,')).toBe(false);
  });
});
