import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  AllowlistError,
  checkAddress,
  checkUrl,
  classifyIp,
  createAddressPolicy,
  MAX_HOST_LENGTH,
  MAX_URL_LENGTH,
  parseAllowEntry,
  parseAllowlist,
  refusedUrls,
  type AddressPolicy,
} from './address-policy.ts';

const open = createAddressPolicy();
const dev = createAddressPolicy(parseAllowlist('127.0.0.2/31, 10.1.0.0/16, fd00:1::/32, site.test:8080, [::1]:9000, 127.0.0.1:7777'), [5432, 8333]);

const code = (p: AddressPolicy, url: string): string | undefined => checkUrl(p, url)?.code;

describe('classifyIp', () => {
  it.each([
    ['127.0.0.1', 'loopback'],
    ['127.255.255.254', 'loopback'],
    ['10.0.0.1', 'private'],
    ['172.16.5.4', 'private'],
    ['172.31.255.255', 'private'],
    ['192.168.1.1', 'private'],
    ['169.254.169.254', 'link-local'],
    ['100.64.0.1', 'cgnat'],
    ['100.127.255.255', 'cgnat'],
    ['224.0.0.1', 'multicast'],
    ['239.255.255.250', 'multicast'],
    ['0.0.0.0', 'unspecified'],
    ['0.1.2.3', 'unspecified'],
    ['255.255.255.255', 'broadcast'],
    ['240.0.0.1', 'reserved'],
    ['192.0.2.1', 'reserved'],
    ['198.18.0.1', 'reserved'],
    ['8.8.8.8', 'public'],
    ['172.32.0.1', 'public'],
    ['100.128.0.1', 'public'],
    ['::1', 'loopback'],
    ['::', 'unspecified'],
    ['fe80::1', 'link-local'],
    ['fe80::1%eth0', 'link-local'],
    ['fc00::1', 'unique-local'],
    ['fd12:3456::1', 'unique-local'],
    ['ff02::1', 'multicast'],
    ['fec0::1', 'private'],
    ['::ffff:127.0.0.1', 'loopback'],
    ['::ffff:7f00:1', 'loopback'],
    ['::ffff:169.254.169.254', 'link-local'],
    ['::ffff:10.0.0.1', 'private'],
    ['::ffff:8.8.8.8', 'public'],
    ['::127.0.0.1', 'loopback'],
    ['::808:808', 'reserved'],
    ['::7f00:1', 'loopback'],
    ['::ffff:0:127.0.0.1', 'loopback'],
    ['64:ff9b::7f00:1', 'reserved'],
    ['2002:7f00:1::1', 'reserved'],
    ['2001:db8::1', 'reserved'],
    ['2606:4700::1111', 'public'],
    ['[::1]', 'loopback'],
  ])('%s is %s', (ip, cls) => {
    expect(classifyIp(ip)).toBe(cls);
  });

  it('does not take names or odd spellings for addresses', () => {
    expect(classifyIp('localhost')).toBeUndefined();
    expect(classifyIp('0x7f.1')).toBeUndefined();
    expect(classifyIp('2130706433')).toBeUndefined();
  });
});

describe('parseAllowEntry / parseAllowlist', () => {
  it('reads CIDRs, bare IPs, host:port and [v6]:port', () => {
    expect(parseAllowEntry('127.0.0.2/31')).toMatchObject({ kind: 'cidr', text: '127.0.0.2/31' });
    expect(parseAllowEntry('10.0.0.5')).toMatchObject({ kind: 'cidr' });
    expect(parseAllowEntry('fd00::/8')).toMatchObject({ kind: 'cidr' });
    expect(parseAllowEntry('Site.Test:8080')).toEqual({ kind: 'host-port', text: 'Site.Test:8080', host: 'site.test', port: 8080 });
    expect(parseAllowEntry('[::1]:9000')).toMatchObject({ kind: 'host-port', host: '0:0:0:0:0:0:0:1', port: 9000 });
    expect(parseAllowEntry('127.0.0.1:7777')).toMatchObject({ kind: 'host-port', host: '127.0.0.1', port: 7777 });
    expect(parseAllowlist('')).toEqual([]);
    expect(parseAllowlist(' , 10.0.0.0/8 ,')).toHaveLength(1);
  });

  it.each([
    ['10.0.0.0/33', 'prefix length'],
    ['fd00::/129', 'prefix length'],
    ['10.0.0/8', 'not an IP address'],
    ['0x7f.1/8', 'not an IP address'],
    ['site.test:0', 'port'],
    ['site.test:65536', 'port'],
    ['site.test:http', 'port'],
    ['site.test', 'expected a CIDR'],
    ['http://site.test/', 'expected a CIDR'],
    ['[zz]:80', 'expected a CIDR'],
  ])('refuses %s naming it', (entry, why) => {
    let err: unknown;
    try {
      parseAllowlist(`10.0.0.0/8,${entry}`);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(AllowlistError);
    expect((err as AllowlistError).entry).toBe(entry);
    expect((err as Error).message).toContain(JSON.stringify(entry));
    expect((err as Error).message).toContain(why);
  });
});

describe('checkUrl (syntax only)', () => {
  it('passes public http(s) on 80/443 and names on 80/443', () => {
    for (const u of ['http://example.com/', 'https://example.com/a?b', 'http://example.com:80/', 'https://8.8.8.8/', 'http://[2606:4700::1111]/'])
      expect(checkUrl(open, u)).toBeUndefined();
  });

  it.each([
    ['ftp://example.com/', 'scheme'],
    ['file:///etc/passwd', 'scheme'],
    ['javascript:alert(1)', 'scheme'],
    ['not a url', 'bad-url'],
    ['http://localhost/', 'local-name'],
    ['http://LOCALHOST./', 'local-name'],
    ['http://api.localhost/', 'local-name'],
    ['http://127.0.0.1/', 'address'],
    ['http://[::1]/', 'address'],
    ['http://[::ffff:127.0.0.1]/', 'address'],
    ['http://169.254.169.254/latest/meta-data/', 'address'],
    ['http://2130706433/', 'address'],
    ['http://0x7f000001/', 'address'],
    ['http://0177.0.0.1/', 'address'],
    ['http://127.1/', 'address'],
    ['http://0/', 'address'],
    ['http://10.0.0.1/', 'address'],
    ['http://100.64.0.1/', 'address'],
    ['http://[fd00::1]/', 'address'],
    ['http://[fe80::1]/', 'address'],
    ['http://example.com:8080/', 'port'],
    ['https://8.8.8.8:22/', 'port'],
    [`http://${'a'.repeat(3000)}.com/`, 'host-too-long'],
    [`http://example.com/${'a'.repeat(MAX_URL_LENGTH)}`, 'url-too-long'],
  ])('refuses %.60s (%s) under the default policy', (url, want) => {
    const r = checkUrl(open, url);
    expect(r?.code).toBe(want);
    expect(r!.message.length).toBeLessThan(400);
  });

  it('names the URL in the refusal', () => {
    expect(checkUrl(open, 'http://127.0.0.1:8333/buckets/captures/')?.message).toContain('http://127.0.0.1:8333/buckets/captures/');
    expect(checkUrl(open, 'http://127.0.0.1:8333/')?.message).toContain('loopback');
  });

  it('allows what the allowlist names, never a stack port through a CIDR', () => {
    expect(checkUrl(dev, 'http://127.0.0.2:41234/')).toBeUndefined();
    expect(checkUrl(dev, 'http://127.0.0.3/')).toBeUndefined();
    expect(code(dev, 'http://127.0.0.4:41234/')).toBe('address');
    expect(code(dev, 'http://127.0.0.2:8333/')).toBe('stack-port');
    expect(code(dev, 'http://127.0.0.2:5432/')).toBe('stack-port');
    expect(checkUrl(dev, 'http://10.1.2.3:9999/')).toBeUndefined();
    expect(checkUrl(dev, 'http://[fd00:1::5]:81/')).toBeUndefined();
    expect(checkUrl(dev, 'http://[::ffff:127.0.0.2]:3000/')).toBeUndefined();
    expect(checkUrl(dev, 'http://site.test:8080/')).toBeUndefined();
    // a name on another port may resolve into an allowlisted CIDR: the connection decides
    expect(checkUrl(dev, 'http://other.test:8081/')).toBeUndefined();
    expect(code(createAddressPolicy(parseAllowlist('site.test:8080')), 'http://site.test:8081/')).toBe('port');
    // the stack's own addresses are never opened, not even by an entry naming them
    expect(code(dev, 'http://[::1]:9000/')).toBe('stack-address');
    expect(code(dev, 'http://[::1]:9001/')).toBe('address');
    expect(code(dev, 'http://127.0.0.1:7777/')).toBe('stack-address');
    expect(code(dev, 'http://127.0.0.1:7778/')).toBe('address');
    expect(code(dev, 'http://localhost:7777/')).toBe('local-name');
  });
});

describe('refusedUrls (what the API answers 400 with)', () => {
  it('names each refused URL with its code and reason, in order, and leaves the rest out', () => {
    const got = refusedUrls(open, ['https://example.com/', 'http://127.0.0.1:8333/buckets/captures/', 'http://localhost/', 'https://example.org/']);
    expect(got).toEqual([
      { url: 'http://127.0.0.1:8333/buckets/captures/', code: 'address', problem: expect.stringContaining('http://127.0.0.1:8333/buckets/captures/') },
      { url: 'http://localhost/', code: 'local-name', problem: expect.stringContaining('localhost names this machine') },
    ]);
  });
  it('shortens a huge URL it names', () => {
    const [r] = refusedUrls(open, [`http://${'a'.repeat(3000)}.com/`]);
    expect(r!.url.length).toBeLessThan(200);
    expect(r!.url).toContain('(3012 characters)');
  });
});

describe('checkAddress (the address connected to)', () => {
  it('refuses a name that resolved inside, naming both', () => {
    const r = checkAddress(open, { ip: '127.0.0.1', port: 80, host: 'rebind.example' });
    expect(r?.code).toBe('address');
    expect(r?.message).toContain('rebind.example → 127.0.0.1');
  });
  it('a host:port entry for a name allows that name on any address, only on its port', () => {
    expect(checkAddress(dev, { ip: '127.0.0.9', port: 8080, host: 'site.test' })).toBeUndefined();
    expect(checkAddress(dev, { ip: '127.0.0.9', port: 8081, host: 'site.test' })?.code).toBe('address');
  });
  it('a public address off 80/443 is refused, and a stack port says so', () => {
    expect(checkAddress(dev, { ip: '8.8.8.8', port: 8080 })?.code).toBe('port');
    expect(checkAddress(dev, { ip: '8.8.8.8', port: 5432 })?.code).toBe('stack-port');
    expect(checkAddress(dev, { ip: '8.8.8.8', port: 443 })).toBeUndefined();
  });
  it('refuses what is not an address', () => {
    expect(checkAddress(open, { ip: 'example.com', port: 80 })?.code).toBe('address');
  });
});

const v4 = fc.tuple(fc.nat(255), fc.nat(255), fc.nat(255), fc.nat(255));
const dotted = ([a, b, c, d]: [number, number, number, number]): string => `${a}.${b}.${c}.${d}`;
/** the spellings of one IPv4 address a URL or a socket may use */
function spellings(o: [number, number, number, number]): string[] {
  const [a, b, c, d] = o;
  const n = ((a << 24) >>> 0) + (b << 16) + (c << 8) + d;
  const hex = (x: number): string => x.toString(16);
  return [
    `http://${dotted(o)}/`,
    `http://${n}/`,
    `http://0x${hex(n)}/`,
    `http://0${a.toString(8)}.${b}.${c}.${d}/`,
    `http://[::ffff:${dotted(o)}]/`,
    `http://[::ffff:${hex((a << 8) + b)}:${hex((c << 8) + d)}]/`,
    `http://[0:0:0:0:0:ffff:${dotted(o)}]/`,
  ];
}

describe('properties', () => {
  it('every address in a refused IPv4 range is refused under every spelling, URL and socket', () => {
    fc.assert(
      fc.property(v4, (o) => {
        const cls = classifyIp(dotted(o));
        if (cls === 'public') return;
        for (const url of spellings(o)) expect(checkUrl(open, url)?.code, url).toBe('address');
        for (const ip of [dotted(o), `::ffff:${dotted(o)}`]) for (const port of [80, 443, 8080]) expect(checkAddress(open, { ip, port })).toBeDefined();
      }),
      { numRuns: 2000 },
    );
  });

  it('refused ranges are found however often sampled inside them', () => {
    const inside = fc.oneof(
      fc.tuple(fc.constant(127), fc.nat(255), fc.nat(255), fc.nat(255)),
      fc.tuple(fc.constant(10), fc.nat(255), fc.nat(255), fc.nat(255)),
      fc.tuple(fc.constant(172), fc.integer({ min: 16, max: 31 }), fc.nat(255), fc.nat(255)),
      fc.tuple(fc.constant(192), fc.constant(168), fc.nat(255), fc.nat(255)),
      fc.tuple(fc.constant(169), fc.constant(254), fc.nat(255), fc.nat(255)),
      fc.tuple(fc.constant(100), fc.integer({ min: 64, max: 127 }), fc.nat(255), fc.nat(255)),
      fc.tuple(fc.integer({ min: 224, max: 255 }), fc.nat(255), fc.nat(255), fc.nat(255)),
      fc.tuple(fc.constant(0), fc.nat(255), fc.nat(255), fc.nat(255)),
    );
    fc.assert(
      fc.property(inside, (o) => {
        expect(classifyIp(dotted(o))).not.toBe('public');
        for (const url of spellings(o)) expect(checkUrl(open, url)?.code, url).toBe('address');
      }),
    );
  });

  it('nothing outside the allowlist passes on a port other than 80/443', () => {
    const port = fc.integer({ min: 1, max: 65535 }).filter((p) => p !== 80 && p !== 443);
    fc.assert(
      fc.property(v4, port, (o, p) => {
        const ip = dotted(o);
        const allowed = checkAddress(dev, { ip, port: p }) === undefined;
        const listed =
          (o[0] === 127 && o[1] === 0 && o[2] === 0 && (o[3] === 2 || o[3] === 3)) || (o[0] === 10 && o[1] === 1) || (ip === '127.0.0.1' && p === 7777);
        const stack = p === 5432 || p === 8333;
        expect(allowed, `${ip}:${p}`).toBe(listed && (!stack || ip === '127.0.0.1'));
        expect(checkUrl(open, `http://${ip}:${p}/`)).toBeDefined();
        expect(checkUrl(open, `http://h${o.join('')}.example:${p}/`)?.code).toBe('port');
      }),
      { numRuns: 2000 },
    );
  });

  it('host names longer than 253 characters are always refused, shorter public names on 80/443 never', () => {
    const label = fc.stringMatching(/^[a-z][a-z0-9]{0,20}$/);
    fc.assert(
      fc.property(fc.array(label, { minLength: 1, maxLength: 40 }), (labels) => {
        const host = `${labels.join('.')}.example`;
        const r = checkUrl(open, `https://${host}/`);
        if (host.length > MAX_HOST_LENGTH) expect(r?.code).toBe('host-too-long');
        else if (labels[labels.length - 1] === 'localhost') expect(r?.code).toBe('local-name');
        else expect(r).toBeUndefined();
      }),
    );
  });
});
