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

const usageError = (io: Io, why: string): number => {
  io.err(`${why}\n${TARGETS_USAGE}`);
  return 2;
};

async function listCommand(db: Db, org: string, rawUrl: string | undefined, io: Io): Promise<number> {
  if (rawUrl !== undefined) return usageError(io, 'list takes only an organization');
  const targets = await listTargets(db, org);
  if (targets.length === 0) io.out(`no targets for ${org}`);
  for (const t of targets) io.out(`${t.enabled ? 'enabled ' : 'disabled'}  ${t.url}`);
  return 0;
}

async function addCommand(db: Db, org: string, url: string, io: Io, policy: AddressPolicy | undefined): Promise<number> {
  const refused = policy === undefined ? undefined : checkUrl(policy, url);
  if (refused !== undefined) {
    io.err(`${url} is outside the address policy (${refused.code}): ${refused.message}`);
    return 2;
  }
  const { created } = await addTarget(db, org, url);
  io.out(created ? `added ${url} for ${org}` : `${url} was already listed for ${org}; enabled`);
  return 0;
}

async function disableCommand(db: Db, org: string, url: string, io: Io): Promise<number> {
  const done = await disableTarget(db, org, url);
  if (!done) {
    io.err(`${url} is not a target of ${org}`);
    return 1;
  }
  io.out(`disabled ${url} for ${org}`);
  return 0;
}

/** The command's target URL, normalized, or the usage complaint about it. */
function targetUrl(cmd: string, rawUrl: string | undefined, rest: string[]): { url: string } | { why: string } {
  if (rawUrl === undefined) return { why: `${cmd} needs a URL` };
  if (rest.length > 0) return { why: `unexpected ${rest.map((r) => JSON.stringify(r)).join(' ')}` };
  const url = normalizeSeed(rawUrl);
  if (url === null) return { why: `${JSON.stringify(rawUrl)} is not an absolute http(s) URL` };
  return { url };
}

/**
 * Runs one command; returns the exit code (0 done, 1 nothing to do, 2 usage). `add` refuses a URL
 * the address policy refuses (the CLI passes the configured one; POST /api/crawls checks again).
 */
export async function runTargets(db: Db, argv: string[], io: Io, policy?: AddressPolicy): Promise<number> {
  const [cmd, org, rawUrl, ...rest] = argv;
  if (cmd === undefined || cmd === '-h' || cmd === '--help') return usageError(io, 'a command is required');
  if (!['add', 'list', 'disable'].includes(cmd)) return usageError(io, `unknown command ${JSON.stringify(cmd)}`);
  if (org === undefined || org.trim() === '') return usageError(io, 'an organization is required');
  if (cmd === 'list') return listCommand(db, org, rawUrl, io);
  const target = targetUrl(cmd, rawUrl, rest);
  if ('why' in target) return usageError(io, target.why);
  return cmd === 'add' ? addCommand(db, org, target.url, io, policy) : disableCommand(db, org, target.url, io);
}
