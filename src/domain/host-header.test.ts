import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { allowedHosts, checkHost, isLoopbackName, LOOPBACK_NAMES } from './host-header.ts';

const loopback = allowedHosts({ host: '127.0.0.1', port: 7070 }, ['http://127.0.0.1:7070']);
const proxied = allowedHosts({ host: '0.0.0.0', port: 7070 }, ['https://ledger.example.org']);
const status = (header: string | string[] | undefined, allowed = loopback) => {
  const d = checkHost(header, allowed);
  return d.ok ? 200 : d.status;
};

describe('allowedHosts', () => {
  it('is the bind address and the loopback names, with the port, for a loopback bind', () => {
    expect([...loopback].sort()).toEqual(['127.0.0.1:7070', '[::1]:7070', 'localhost:7070']);
  });

  it('adds each public URL with its port, or its scheme’s default port', () => {
    expect(allowedHosts({ host: '127.0.0.1', port: 7071 }, ['http://issuer.test:9000/', 'https://Ledger.Example.org/api'])).toEqual(
      new Set(['127.0.0.1:7071', 'localhost:7071', '[::1]:7071', 'issuer.test:9000', 'ledger.example.org:443']),
    );
  });

  it('brackets an IPv6 bind address, and a wildcard bind answers on the loopback names', () => {
    expect(allowedHosts({ host: '::1', port: 1 })).toEqual(new Set(['[::1]:1', 'localhost:1', '127.0.0.1:1']));
    expect(proxied).toEqual(new Set(['localhost:7070', '127.0.0.1:7070', '[::1]:7070', 'ledger.example.org:443']));
  });

  it('a routable bind address answers for itself only, not for the loopback names', () => {
    expect(allowedHosts({ host: '10.1.2.3', port: 80 })).toEqual(new Set(['10.1.2.3:80']));
  });

  it('ignores a public URL that is not an http(s) URL, and a server with no port has only its public URLs', () => {
    expect(allowedHosts({ host: '127.0.0.1', port: 5 }, ['not a url', 'ftp://x.test/'])).toEqual(new Set(['127.0.0.1:5', 'localhost:5', '[::1]:5']));
    expect(allowedHosts(undefined, ['http://a.test:8'])).toEqual(new Set(['a.test:8']));
  });
});

describe('checkHost', () => {
  it.each<[string | string[] | undefined, number]>([
    ['127.0.0.1:7070', 200],
    ['LOCALHOST:7070', 200],
    ['[::1]:7070', 200],
    ['attacker.test', 421],
    ['attacker.test:7070', 421],
    ['127.0.0.1:7071', 421],
    ['127.0.0.1', 421],
    ['127.0.0.2:7070', 421],
    ['localhost.:7070', 421],
    [undefined, 400],
    ['', 400],
    [['127.0.0.1:7070', '127.0.0.1:7070'], 400],
    ['127.0.0.1:7070/x', 400],
    ['user@127.0.0.1:7070', 400],
    ['127.0.0.1:7070 ', 400],
    ['a'.repeat(400), 400],
  ])('Host %j → %i', (header, expected) => {
    expect(status(header)).toBe(expected);
  });

  it('a Host without a port matches the public URL’s default port', () => {
    expect(status('ledger.example.org', proxied)).toBe(200);
    expect(status('ledger.example.org:443', proxied)).toBe(200);
    expect(status('ledger.example.org:7070', proxied)).toBe(421);
  });

  it('names the refused host in the error, and never returns the refused one as accepted', () => {
    const d = checkHost('attacker.test:7070', loopback);
    expect(d).toEqual({ ok: false, status: 421, error: 'misdirected request: this server does not answer for the host "attacker.test:7070"' });
  });
});

const label = fc.stringMatching(/^[a-z0-9](?:[a-z0-9-]{0,10}[a-z0-9])?$/);
const domain = fc.array(label, { minLength: 1, maxLength: 4 }).map((labels) => labels.join('.'));
const port = fc.integer({ min: 1, max: 65535 });

describe('checkHost properties', () => {
  it('every allowed name is answered, in any letter case', () => {
    fc.assert(
      fc.property(fc.constantFrom(...LOOPBACK_NAMES), port, fc.array(fc.boolean(), { maxLength: 20 }), (name, p, upper) => {
        const allowed = allowedHosts({ host: '127.0.0.1', port: p });
        const header = [...`${name}:${p}`].map((c, i) => (upper[i] ? c.toUpperCase() : c)).join('');
        expect(checkHost(header, allowed).ok).toBe(true);
      }),
    );
  });

  it('a name not allowed is 421, on any port, whatever is allowed', () => {
    fc.assert(
      fc.property(domain, fc.option(port), port, fc.array(domain, { maxLength: 3 }), (name, headerPort, bindPort, publicNames) => {
        fc.pre(!isLoopbackName(name) && !publicNames.includes(name));
        const allowed = allowedHosts(
          { host: '127.0.0.1', port: bindPort },
          publicNames.map((n) => `http://${n}:${bindPort}`),
        );
        const header = headerPort === null ? name : `${name}:${headerPort}`;
        expect(checkHost(header, allowed)).toMatchObject({ ok: false, status: 421 });
      }),
    );
  });

  it('an allowed name on another port is 421', () => {
    fc.assert(
      fc.property(fc.constantFrom(...LOOPBACK_NAMES), port, port, (name, bound, asked) => {
        fc.pre(bound !== asked);
        expect(checkHost(`${name}:${asked}`, allowedHosts({ host: '127.0.0.1', port: bound }))).toMatchObject({ ok: false, status: 421 });
      }),
    );
  });

  it('any string is answered 200, 400 or 421, and 200 only for a name in the set', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 60 }), (header) => {
        const d = checkHost(header, loopback);
        if (d.ok) expect([...loopback].some((key) => key === header.toLowerCase())).toBe(true);
        else expect([400, 421]).toContain(d.status);
      }),
    );
  });
});

describe('checkHost with names answered by pattern', () => {
  const archive = (h: string) => /^[0-9a-f]{32}\.replay\.localhost$/.test(h);
  const label = 'a'.repeat(32);
  it('takes a matching name on a port the server answers on, and on no other port', () => {
    expect(checkHost(`${label}.replay.localhost:7070`, loopback, archive)).toEqual({ ok: true, hostname: `${label}.replay.localhost` });
    expect(checkHost(`${label}.replay.localhost:7071`, loopback, archive)).toMatchObject({ ok: false, status: 421 });
    expect(checkHost(`${label}.replay.localhost`, proxied, archive)).toEqual({ ok: true, hostname: `${label}.replay.localhost` });
  });
  it('a name the pattern refuses is 421 as before', () => {
    expect(checkHost('attacker.test:7070', loopback, archive)).toMatchObject({ ok: false, status: 421 });
    expect(checkHost(`${label}.replay.localhost.attacker.test:7070`, loopback, archive)).toMatchObject({ ok: false, status: 421 });
  });
});
