import { describe, expect, it } from 'vitest';
import { DecisionTallies, groupRobots, tallyDecisions } from './decisions.ts';

describe('tallyDecisions', () => {
  it('counts distinct URLs per rule and host name, up to 5 samples, groups in order first met', () => {
    const ds = [
      { url: 'https://a.com/1', hostname: 'a.com', rule: 1, action: 'follow' as const },
      { url: 'https://b.com/1', hostname: 'b.com', rule: 0, action: 'skip' as const },
      { url: 'https://a.com/1', hostname: 'a.com', rule: 1, action: 'follow' as const },
      ...Array.from({ length: 6 }, (_, i) => ({ url: `https://a.com/x${i}`, hostname: 'a.com', rule: 1, action: 'follow' as const })),
      { url: 'https://a.com/y', hostname: 'a.com', rule: 2, action: 'skip' as const },
    ];
    expect(tallyDecisions(ds)).toEqual([
      {
        rule: 1,
        action: 'follow',
        hostname: 'a.com',
        links: 7,
        samples: ['https://a.com/1', 'https://a.com/x0', 'https://a.com/x1', 'https://a.com/x2', 'https://a.com/x3'],
      },
      { rule: 0, action: 'skip', hostname: 'b.com', links: 1, samples: ['https://b.com/1'] },
      { rule: 2, action: 'skip', hostname: 'a.com', links: 1, samples: ['https://a.com/y'] },
    ]);
    expect(tallyDecisions([])).toEqual([]);
  });

  it('toArray returns copies', () => {
    const t = new DecisionTallies();
    t.add({ url: 'https://a.com/', hostname: 'a.com', rule: 1, action: 'follow' });
    const first = t.toArray();
    first[0]!.samples.push('mutated');
    expect(t.toArray()[0]!.samples).toEqual(['https://a.com/']);
  });
});

describe('groupRobots', () => {
  it('groups pages robots.txt kept out per host name, port dropped, distinct URLs', () => {
    expect(
      groupRobots(['https://www.example.com/private', 'https://www.example.com:8443/x', 'https://other.org/a', 'https://www.example.com/private']),
    ).toEqual([
      { hostname: 'www.example.com', pages: 2, samples: ['https://www.example.com/private', 'https://www.example.com:8443/x'] },
      { hostname: 'other.org', pages: 1, samples: ['https://other.org/a'] },
    ]);
  });
});
