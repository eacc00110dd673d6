import { gunzipSync, gzipSync } from 'node:zlib';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { gzipMember, gzipMembers, readGzipMember } from './warc-gzip.ts';
import { parseWarcGz, serializeRecord, warcGzRecordAt } from './warc.ts';

const record = (n: number): Buffer =>
  serializeRecord({ headers: { 'WARC-Type': 'resource', 'WARC-Record-ID': `<urn:uuid:${n}>` }, block: Buffer.from(`block ${n} `.repeat(n)) });

describe('record-at-a-time gzip', () => {
  it('any list of buffers, one member each, comes back as the same buffers at the offsets they were written at (fast-check)', () => {
    fc.assert(
      fc.property(fc.array(fc.uint8Array({ maxLength: 3000 }), { maxLength: 12 }), (parts) => {
        const members = parts.map((p) => gzipMember(Buffer.from(p)));
        const file = Buffer.concat(members);
        const read = gzipMembers(file);
        expect(read.map((m) => [...m.data])).toEqual(parts.map((p) => [...p]));
        let offset = 0;
        for (const [i, m] of read.entries()) {
          expect([m.offset, m.length]).toEqual([offset, members[i]!.length]);
          offset += m.length;
        }
        // and the standard tool inflates the whole file to the concatenation
        if (parts.length > 0) expect(gunzipSync(file).equals(Buffer.concat(parts.map((p) => Buffer.from(p))))).toBe(true);
      }),
    );
  });

  it('reads members written by another gzip (with a file name in the header)', () => {
    const named = gzipSync(Buffer.from('hello'));
    named[3] = 8; // FNAME
    const withName = Buffer.concat([named.subarray(0, 10), Buffer.from('x.warc\0'), named.subarray(10)]);
    expect(readGzipMember(withName, 0)).toMatchObject({ offset: 0, length: withName.length, data: Buffer.from('hello') });
  });

  it('refuses a member cut short, a wrong CRC, and bytes that are not gzip', () => {
    const m = gzipMember(Buffer.from('some WARC record bytes'));
    expect(() => readGzipMember(m.subarray(0, m.length - 3), 0)).toThrow();
    const bad = Buffer.from(m);
    bad[bad.length - 8]! ^= 0xff;
    expect(() => readGzipMember(bad, 0)).toThrow(/CRC/);
    expect(() => gzipMembers(Buffer.from('WARC/1.1\r\n'))).toThrow(/no gzip header/);
  });

  it('a .warc.gz reads back record by record, each at its member, and a pointer must name a whole member', () => {
    const members = [1, 2, 3].map((n) => gzipMember(record(n)));
    const file = Buffer.concat(members);
    const recs = parseWarcGz(file);
    expect(recs.map((r) => r.headers['WARC-Record-ID'])).toEqual(['<urn:uuid:1>', '<urn:uuid:2>', '<urn:uuid:3>']);
    expect(recs.map((r) => r.length)).toEqual(members.map((m) => m.length));
    expect(warcGzRecordAt(file, recs[1]!.offset, recs[1]!.length).block.toString()).toBe('block 2 block 2 ');
    expect(() => warcGzRecordAt(file, recs[1]!.offset, recs[1]!.length - 1)).toThrow();
    expect(() => warcGzRecordAt(file, recs[1]!.offset + 1, recs[1]!.length)).toThrow();
    // two records in one member is not record-at-a-time
    expect(() => parseWarcGz(gzipMember(Buffer.concat([record(1), record(2)])))).toThrow(/2 records/);
  });
});
