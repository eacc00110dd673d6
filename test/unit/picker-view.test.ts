// The picker page as rendered: its script parses, both views are there under dev and JWT
// identity, and the Crawls view asks the endpoints it is built on.
import { describe, expect, it } from 'vitest';
import { pickerView } from '../../src/api/picker.ts';

const scriptOf = (html: string): string => /<script>([\s\S]*)<\/script>/.exec(html)![1]!;

describe('pickerView', () => {
  it('renders a script that parses, for dev and oidc', () => {
    for (const mode of ['dev', 'oidc'] as const) {
      const html = pickerView(mode, { replayUrl: 'http://r' });
      expect(() => new Function(scriptOf(html))).not.toThrow();
    }
  });

  it('has an Archives and a Crawls view, and the Crawls view reads list, crawl, progress, pacing and decisions', () => {
    const html = pickerView('dev', { replayUrl: 'http://r', pollMs: 500 });
    expect(html).toContain('data-view="archives"');
    expect(html).toContain('data-view="crawls"');
    expect(html).toContain('id="crawls-view" hidden');
    expect(html).toContain('data-poll="500"');
    const script = scriptOf(html);
    for (const path of ["'/api/crawls?'", "'/progress'", "'/pacing'", "'/decisions'", "q.set('beforeId'"]) expect(script).toContain(path);
  });

  it('has no views and no script when nobody is identified', () => {
    const html = pickerView('none', { replayUrl: 'http://r' });
    expect(html).not.toContain('<script>');
    expect(html).not.toContain('crawls-view');
  });
});
