import { describe, expect, it } from 'vitest';
import { grantLine, MEMBER_REFUSED, parseGrantArgs, runGrantCli, USAGE } from './grant.ts';

describe('parseGrantArgs', () => {
  it('takes action, relation, user and org', () => {
    expect(parseGrantArgs(['grant', 'submitter', 'alice', 'acme'])).toEqual({ ok: true, action: 'grant', relation: 'submitter', user: 'alice', org: 'acme' });
    expect(parseGrantArgs(['revoke', 'admin', 'bob', 'globex'])).toEqual({ ok: true, action: 'revoke', relation: 'admin', user: 'bob', org: 'globex' });
  });

  it('accepts the typed forms user:… and organization:…', () => {
    expect(parseGrantArgs(['grant', 'admin', 'user:alice', 'organization:acme'])).toMatchObject({ ok: true, user: 'alice', org: 'acme' });
  });

  it('refuses member with the reason: membership comes from the identity provider', () => {
    const r = parseGrantArgs(['grant', 'member', 'alice', 'acme']);
    expect(r).toEqual({ ok: false, message: `fga:grant: refused: ${MEMBER_REFUSED}` });
    expect(MEMBER_REFUSED).toContain('membership comes from the identity provider');
    expect(parseGrantArgs(['revoke', 'member', 'alice', 'acme'])).toEqual({ ok: false, message: `fga:revoke: refused: ${MEMBER_REFUSED}` });
  });

  it.each([
    [['grant', 'owner', 'alice', 'acme'], 'fga:grant: unknown relation "owner" (submitter or admin)'],
    [['grant', 'can_submit', 'alice', 'acme'], 'fga:grant: unknown relation "can_submit" (submitter or admin)'],
    [['grant'], 'fga:grant: missing <relation>'],
    [['grant', 'submitter'], 'fga:grant: missing <user>'],
    [['revoke', 'submitter', 'alice'], 'fga:revoke: missing <org>'],
    [['grant', 'submitter', 'alice', 'acme', 'extra'], 'fga:grant: unexpected "extra"'],
    [['grant', 'submitter', 'al ice', 'acme'], 'fga:grant: "al ice" is not a user id'],
    [['grant', 'submitter', 'alice', 'acme#member'], 'fga:grant: "acme#member" is not an organization id'],
    [['grant', 'submitter', '*', 'acme'], 'fga:grant: "*" is not a user id'],
    [[], 'unknown action ""'],
    [['share', 'submitter', 'alice', 'acme'], 'unknown action "share"'],
  ])('%j → usage', (argv, first) => {
    const r = parseGrantArgs(argv);
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.message.split('\n')[0]).toContain(first);
    expect(r.message.endsWith(USAGE)).toBe(true);
  });
});

describe("grantLine: the spec's exact sentences", () => {
  it('grant', () => {
    expect(grantLine('grant', 'alice', 'acme', 'user:alice submitter organization:acme', true)).toBe(
      'alice は acme のクロールを始められます (書いた: user:alice submitter organization:acme)',
    );
  });

  it('revoke', () => {
    expect(grantLine('revoke', 'alice', 'acme', 'user:alice submitter organization:acme', false)).toBe(
      'alice は acme のクロールを始められません (消した: user:alice submitter organization:acme)',
    );
  });

  it('revoke while another relation still allows it', () => {
    expect(grantLine('revoke', 'alice', 'acme', 'user:alice submitter organization:acme', true)).toBe(
      'alice は acme のクロールを始められます (消した: user:alice submitter organization:acme、ほかの関係で許されています)',
    );
  });
});

describe('runGrantCli without a server', () => {
  it('usage errors exit 2 and never build a client (no configuration needed)', async () => {
    const err: string[] = [];
    const code = await runGrantCli(
      ['grant', 'member', 'alice', 'acme'],
      () => {
        throw new Error('must not be called');
      },
      { out: () => {}, err: (l) => err.push(l) },
    );
    expect(code).toBe(2);
    expect(err).toEqual([`fga:grant: refused: ${MEMBER_REFUSED}`]);
  });
});
