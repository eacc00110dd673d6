// The processes this test process started, and theirs, read from /proc (Linux): how a test sees
// what a browser really runs (its command line, its renderers) without asking the browser; and
// the CPU time a process used, as benches count it.
import { readdirSync, readFileSync } from 'node:fs';

export interface ProcessInfo {
  pid: number;
  args: string[];
  children: ProcessInfo[];
}

/** A process's arguments, undefined when it has ended. Chromium's child processes rewrite their
 * title: one string, the arguments joined by spaces. */
function argsOf(pid: number | string): string[] | undefined {
  let cmdline: string;
  try {
    cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
  } catch {
    return undefined;
  }
  const parts = cmdline.split('\0').filter((a) => a !== '');
  return parts.length === 1 ? parts[0]!.split(' ') : parts;
}

function read(pid: number): ProcessInfo | undefined {
  const args = argsOf(pid);
  if (args === undefined) return undefined; // ended meanwhile
  const children: ProcessInfo[] = [];
  let tids: string[] = [];
  try {
    tids = readdirSync(`/proc/${pid}/task`);
  } catch {
    tids = [];
  }
  for (const tid of tids) {
    let list = '';
    try {
      list = readFileSync(`/proc/${pid}/task/${tid}/children`, 'utf8');
    } catch {
      continue;
    }
    for (const c of list.split(' ').filter((x) => x !== '')) {
      const child = read(Number(c));
      if (child !== undefined) children.push(child);
    }
  }
  return { pid, args, children };
}

/** Every process below this one, depth first. */
export function descendants(of: ProcessInfo = read(process.pid)!): ProcessInfo[] {
  return of.children.flatMap((c) => [c, ...descendants(c)]);
}

/** Chromium browser processes (no --type=) below this process whose arguments satisfy `which`. */
export function chromiumBrowsers(which: (args: string[]) => boolean): ProcessInfo[] {
  return descendants().filter((p) => /(^|\/)(chromium|chrome)$/.test(p.args[0] ?? '') && !p.args.some((a) => a.startsWith('--type=')) && which(p.args));
}

/** The value of the last `--name=` switch (Chromium keeps the last one given). */
export function lastSwitch(args: string[], name: string): string | undefined {
  return args
    .filter((a) => a.startsWith(`--${name}=`))
    .at(-1)
    ?.slice(name.length + 3);
}

/** Linux's USER_HZ: /proc/<pid>/stat counts CPU time in these ticks */
const CLOCK_TICKS = 100;

/**
 * CPU seconds a process has used so far (user and system), with `reaped` also those of the
 * finished children it waited for; undefined when it has ended.
 */
export function cpuSecondsOf(pid: number, opts: { reaped?: boolean } = {}): number | undefined {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return undefined;
  }
  // fields after "(comm) ": state is [0], utime [11], stime [12], cutime [13], cstime [14]
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const ticks = Number(f[11]) + Number(f[12]) + (opts.reaped === true ? Number(f[13]) + Number(f[14]) : 0);
  return ticks / CLOCK_TICKS;
}

/** Every process on the machine whose arguments satisfy `which` (the stack's servers, say). */
export function processesWhere(which: (args: string[]) => boolean): { pid: number; args: string[] }[] {
  const out: { pid: number; args: string[] }[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const args = argsOf(entry);
    if (args !== undefined && args.length > 0 && which(args)) out.push({ pid: Number(entry), args });
  }
  return out;
}
