// The picker as served: every browser module in src/picker/ compiles (types stripped) to a module
// Node can parse, the page names the ids its modules look up, and the CSP lets the page load only
// its own scripts and styles and images from the S3 endpoint.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { compilePickerModules, PICKER_DIR, pickerCsp } from '../../src/api/picker.ts';

describe('the picker as files', () => {
  const modules = compilePickerModules();

  it('serves main.js and every module it imports, each a parseable ES module', () => {
    expect([...modules.keys()].sort()).toEqual(['api.js', 'archives.js', 'chart.js', 'crawls.js', 'dom.js', 'format.js', 'main.js', 'open.js', 'search.js']);
    const dir = mkdtempSync(join(tmpdir(), 'picker-'));
    try {
      for (const [name, code] of modules) {
        expect(code).not.toMatch(/^\s*(import|export) type /m);
        for (const m of code.matchAll(/from '\.\/([^']+)'/g)) expect(modules.has(m[1]!)).toBe(true);
        const file = join(dir, name.replace(/\.js$/, '.mjs'));
        writeFileSync(file, code);
        execFileSync(process.execPath, ['--check', file]);
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('has a template per identity mode, and the views the modules fill', () => {
    const html = readFileSync(`${PICKER_DIR}index.html`, 'utf8');
    for (const id of [
      'tpl-dev',
      'tpl-oidc',
      'tpl-none',
      'tpl-views',
      'archives',
      'hits',
      'search',
      'crawls',
      'progress-levels',
      'progress-hosts',
      'pacing',
      'pacing-chart-slot',
      'decisions',
    ]) {
      expect(html).toContain(`id="${id}"`);
    }
    expect(html).not.toMatch(/<script>|<style>| on[a-z]+=/);
  });

  it('allows only its own scripts and styles, and images from the S3 endpoint', () => {
    expect(pickerCsp('http://127.0.0.1:8333/base')).toBe(
      "default-src 'none'; script-src 'self'; style-src 'self'; img-src http://127.0.0.1:8333; connect-src 'self'; form-action 'none'; base-uri 'none'; frame-ancestors 'none'",
    );
  });
});
