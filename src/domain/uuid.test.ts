import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isUuid } from './uuid.ts';

describe('isUuid', () => {
  it('property: any UUID, in either case, and nothing around it', () => {
    fc.assert(
      fc.property(fc.uuid(), fc.string({ minLength: 1, maxLength: 3 }), (id, extra) => {
        expect(isUuid(id)).toBe(true);
        expect(isUuid(id.toUpperCase())).toBe(true);
        expect(isUuid(extra + id)).toBe(false);
        expect(isUuid(id + extra)).toBe(false);
      }),
    );
    expect(isUuid(randomUUID())).toBe(true);
  });

  it('refuses the near misses a path, cursor or document id could carry', () => {
    const id = randomUUID();
    for (const bad of [`urn:uuid:${id}`, `{${id}}`, `${id}\n`, id.replaceAll('-', ''), id.slice(0, -1), `${id.slice(0, -1)}g`, ''])
      expect(isUuid(bad), bad).toBe(false);
  });
});
