import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { DOCUMENT_POLICY } from './policy.ts';
import { replayWebPageDir } from './server.ts';
import { withAppForms } from './app-forms.ts';

describe('withAppForms', () => {
  it("puts its script first in ReplayWeb.page's head and leaves the rest as it was", () => {
    const index = readFileSync(`${replayWebPageDir()}/index.html`, 'utf8');
    const out = withAppForms(index);
    const head = /<head[^>]*>/i.exec(out)!;
    expect(
      out
        .slice(head.index + head[0].length)
        .trimStart()
        .startsWith('<script>'),
    ).toBe(true);
    expect(out.replace(/<script>\ndocument\.addEventListener\('keydown'[\s\S]*?<\/script>/, '')).toBe(index);
  });
  it('refuses a page without a head rather than serving the app without its forms', () => {
    expect(() => withAppForms('<html><body></body></html>')).toThrow("ReplayWeb.page's index.html has no <head>");
  });
});

describe('the sandbox', () => {
  it('lets no form be submitted, and no popup or top navigation', () => {
    const sandbox = DOCUMENT_POLICY.split('; ')
      .find((d) => d.startsWith('sandbox '))!
      .split(' ')
      .slice(1);
    expect(sandbox).toEqual(['allow-scripts', 'allow-same-origin', 'allow-modals', 'allow-downloads', 'allow-pointer-lock']);
  });
});
