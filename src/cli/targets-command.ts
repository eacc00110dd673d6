// `npm run targets -- add|list|disable <org> [<url>]`: the only writer of capture_targets, the
// list a crawl with fromTargets starts from. URLs are stored as the crawl records seeds (parsed,
// fragment dropped), so a target and the page it becomes are the same string.
import type { Db } from '../db/connect.ts';
import { checkUrl, type AddressPolicy } from '../domain/address-policy.ts';
import { normalizeSeed } from '../domain/crawl.ts';
import { addTarget, disableTarget, listTargets } from '../store/targets.ts';

export const TARGETS_USAGE = `usage: npm run targets -- add <org> <url>
       npm run targets -- list <org>
       npm run targets -- disable <org> <url>`;

export interface Io {
  out(line: string): void;
  err(line: string): void;
}

/**
 * Runs one command; returns the exit code (0 done, 1 nothing to do, 2 usage). `add` refuses a URL
 * the address policy refuses (the CLI passes the configured one; POST /api/crawls checks again).
 */
export async function runTargets(db: Db, argv: string[], io: Io, policy?: AddressPolicy): Promise<number> {
  const [cmd, org, rawUrl, ...rest] = argv;
  const usage = (why: string): number => {
    io.err(`${why}\n${TARGETS_USAGE}`);
    return 2;
  };
  if (cmd === undefined || cmd === '-h' || cmd === '--help') return usage('a command is required');
  if (!['add', 'list', 'disable'].includes(cmd)) return usage(`unknown command ${JSON.stringify(cmd)}`);
  if (org === undefined || org.trim() === '') return usage('an organization is required');
  if (cmd === 'list') {
    if (rawUrl !== undefined) return usage('list takes only an organization');
    const targets = await listTargets(db, org);
    if (targets.length === 0) io.out(`no targets for ${org}`);
    for (const t of targets) io.out(`${t.enabled ? 'enabled ' : 'disabled'}  ${t.url}`);
    return 0;
  }
  if (rawUrl === undefined) return usage(`${cmd} needs a URL`);
  if (rest.length > 0) return usage(`unexpected ${rest.map((r) => JSON.stringify(r)).join(' ')}`);
  const url = normalizeSeed(rawUrl);
  if (url === null) return usage(`${JSON.stringify(rawUrl)} is not an absolute http(s) URL`);
  if (cmd === 'add') {
    const refused = policy === undefined ? undefined : checkUrl(policy, url);
    if (refused !== undefined) {
      io.err(`${url} is outside the address policy (${refused.code}): ${refused.message}`);
      return 2;
    }
    const { created } = await addTarget(db, org, url);
    io.out(created ? `added ${url} for ${org}` : `${url} was already listed for ${org}; enabled`);
    return 0;
  }
  const done = await disableTarget(db, org, url);
  if (!done) {
    io.err(`${url} is not a target of ${org}`);
    return 1;
  }
  io.out(`disabled ${url} for ${org}`);
  return 0;
}
