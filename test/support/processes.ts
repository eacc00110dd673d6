// The processes this test process started, and theirs, read from /proc (Linux): how a test sees
// what a browser really runs (its command line, its renderers) without asking the browser.
import { readdirSync, readFileSync } from 'node:fs';

export interface ProcessInfo {
  pid: number;
  args: string[];
  children: ProcessInfo[];
}

function read(pid: number): ProcessInfo | undefined {
  let cmdline: string;
  try {
    cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
  } catch {
    return undefined; // ended meanwhile
  }
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
  // Chromium's child processes rewrite their title: one string, the arguments joined by spaces
  const parts = cmdline.split('\0').filter((a) => a !== '');
  return { pid, args: parts.length === 1 ? parts[0]!.split(' ') : parts, children };
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
