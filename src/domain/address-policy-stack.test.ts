// No allowlist entry opens the stack (issue 29, Deliver 4): whatever the entries, the stack's
// ports are refused on every address and its own address on every port, and a name's host:port
// entry never opens a metadata or link-local address unless that address has an entry itself.
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { checkAddress, checkUrl, createAddressPolicy, METADATA_ADDRESSES, parseAllowEntry, STACK_ADDRESSES, type AllowEntry } from './address-policy.ts';

const STACK_PORTS = [55432, 7233, 8233, 8080, 8081, 8333, 9200, 7070];
const octet = fc.nat(255);
const v4 = fc.tuple(octet, octet, octet, octet).map((o) => o.join('.'));
const port = fc.integer({ min: 1, max: 65535 });
/** any entry an operator could write: wide CIDRs included, names on any port */
const entry: fc.Arbitrary<AllowEntry> = fc
  .oneof(
    fc.constantFrom('0.0.0.0/0', '::/0', '127.0.0.0/8', '169.254.0.0/16', '::ffff:0:0/96', 'fd00::/8', '127.0.0.1', '::1'),
    fc.tuple(v4, fc.integer({ min: 0, max: 32 })).map(([ip, bits]) => `${ip}/${bits}`),
    fc
      .tuple(fc.constantFrom('site.test', 'rebind.test', '127.0.0.1', '[::1]', '169.254.169.254', '10.0.0.1'), fc.oneof(port, fc.constantFrom(...STACK_PORTS)))
      .map(([h, p]) => `${h}:${p}`),
  )
  .map(parseAllowEntry);
const policyOf = (entries: AllowEntry[]) => createAddressPolicy(entries, STACK_PORTS);
/** an address in any of its spellings, reached by name or not */
const target = fc.record({
  ip: fc.oneof(
    v4,
    v4.map((a) => `::ffff:${a}`),
    fc.constantFrom('::1', '::', 'fd00:ec2::254'),
  ),
  host: fc.option(fc.constantFrom('site.test', 'rebind.test'), { nil: undefined }),
});

describe('no allowlist entry opens the stack', () => {
  it('a stack port is refused on every address, whatever the entries', () => {
    fc.assert(
      fc.property(fc.array(entry, { maxLength: 6 }), target, fc.constantFrom(...STACK_PORTS), (entries, t, p) => {
        const r = checkAddress(policyOf(entries), { ...t, port: p });
        expect(r).toBeDefined();
      }),
      { numRuns: 2000 },
    );
  });
  it('the stack’s own address is refused on every port (Temporal’s random ones too), in every spelling', () => {
    const spellings = [...STACK_ADDRESSES, '::ffff:127.0.0.1', '0:0:0:0:0:0:0:1', '::ffff:0.0.0.0'];
    fc.assert(
      fc.property(
        fc.array(entry, { maxLength: 6 }),
        fc.constantFrom(...spellings),
        port,
        fc.option(fc.constantFrom('site.test', 'rebind.test'), { nil: undefined }),
        (entries, ip, p, host) => {
          expect(checkAddress(policyOf(entries), { ip, port: p, ...(host !== undefined ? { host } : {}) })).toBeDefined();
        },
      ),
      { numRuns: 2000 },
    );
  });
  it('says why when an entry would otherwise have opened it', () => {
    const all = policyOf(['0.0.0.0/0', '::/0', 'site.test:8080', '127.0.0.1:3000'].map(parseAllowEntry));
    expect(checkAddress(all, { ip: '127.0.0.1', port: 43255 })?.code).toBe('stack-address');
    expect(checkAddress(all, { ip: '127.0.0.1', port: 3000 })?.code).toBe('stack-address');
    expect(checkAddress(all, { ip: '127.0.0.9', port: 8080, host: 'site.test' })).toMatchObject({
      code: 'stack-port',
      message: "site.test → 127.0.0.9 port 8080: port 8080 is one of the stack's own, which no allowlist entry opens",
    });
    expect(checkUrl(all, 'http://site.test:8080/')?.code).toBe('stack-port');
    expect(checkUrl(all, 'http://[::ffff:127.0.0.1]:3000/')?.code).toBe('stack-address');
  });
});

describe('a host:port entry for a name', () => {
  const named = policyOf([parseAllowEntry('site.test:3000')]);
  it('opens what its name resolves to on its port, loopback and private included', () => {
    for (const ip of ['127.0.0.9', '10.1.2.3', '::ffff:192.168.1.1', '8.8.8.8'])
      expect(checkAddress(named, { ip, port: 3000, host: 'site.test' }), ip).toBeUndefined();
    expect(checkAddress(named, { ip: '127.0.0.9', port: 3001, host: 'site.test' })?.code).toBe('address');
  });
  it('never opens a metadata or link-local address', () => {
    fc.assert(
      fc.property(
        fc.oneof(
          fc.constantFrom(...METADATA_ADDRESSES, '::ffff:169.254.169.254', 'fe80::1'),
          fc.tuple(octet, octet).map(([c, d]) => `169.254.${c}.${d}`),
        ),
        (ip) => {
          const r = checkAddress(named, { ip, port: 3000, host: 'site.test' });
          expect(r?.code).toBe('address');
          expect(r?.message).toContain('which an entry for site.test does not open');
        },
      ),
    );
  });
  it('unless that address itself is listed, as an address or with its port', () => {
    for (const extra of ['169.254.169.254', '169.254.169.254:3000', '169.254.0.0/16']) {
      const listed = policyOf(['site.test:3000', extra].map(parseAllowEntry));
      expect(checkAddress(listed, { ip: '169.254.169.254', port: 3000, host: 'site.test' }), extra).toBeUndefined();
    }
    const ec2 = policyOf(['site.test:3000', 'fd00:ec2::254'].map(parseAllowEntry));
    expect(checkAddress(ec2, { ip: 'fd00:ec2::254', port: 3000, host: 'site.test' })).toBeUndefined();
  });
});
