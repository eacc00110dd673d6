// The store on cores of its own, by simulation: on this machine every process of the stack shares
// its two cores, so whatever the ledger does beside its reads is taken from the store serving them.
// In a deployment S3 runs on machines of its own. Pinning SeaweedFS to some of the cores and the
// ledger's side (this process, Postgres) to the others (Linux's sched_setaffinity, through
// util-linux's `taskset`) measures admission as it is when the store does not share the ledger's
// CPU: what is simulated is only where each process may run; every read, row and byte is real.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { serverProcesses } from './support-cpu.ts';

export interface CoresApart {
  /** the cores the store (SeaweedFS) may run on, and those of this process and Postgres */
  store: number[];
  ledger: number[];
}

/** The cores this process may run on (its cpuset, which a container may have narrowed), from /proc. */
export function allowedCores(status: string = readFileSync('/proc/self/status', 'utf8')): number[] {
  const list = /^Cpus_allowed_list:\s*(\S+)/m.exec(status)?.[1];
  if (list === undefined) throw new Error('no Cpus_allowed_list in /proc/self/status: pinning needs Linux');
  return list.split(',').flatMap((part) => {
    const [from, to = from] = part.split('-').map(Number) as [number, number?];
    return Array.from({ length: to - from + 1 }, (_, i) => from + i);
  });
}

/** The store gets the first half of the cores (at least one), the ledger the rest; null on one core. */
export function coresApart(cores: readonly number[] = allowedCores()): CoresApart | null {
  if (cores.length < 2) return null;
  const half = Math.floor(cores.length / 2);
  return { store: cores.slice(0, half), ledger: cores.slice(half) };
}

/** A process's affinity as taskset prints it (a hex mask), undefined once it has ended. */
export function maskOf(pid: number): string | undefined {
  try {
    const out = execFileSync('taskset', ['-p', String(pid)], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
    return /mask:\s*([0-9a-f]+)/i.exec(out)?.[1];
  } catch {
    return undefined;
  }
}

/** The mask taskset prints for these cores. */
export function maskHex(cores: readonly number[]): string {
  return cores.reduce((m, c) => m | (1n << BigInt(c)), 0n).toString(16);
}

/** Every thread of `pid` may run on `cpus` only (a list like "0" or "1-3", or a mask with asMask). */
function pin(pid: number, cpus: string, asMask = false): void {
  try {
    execFileSync('taskset', asMask ? ['-a', '-p', cpus, String(pid)] : ['-a', '-p', '-c', cpus, String(pid)], { stdio: 'ignore' });
  } catch {
    // a Postgres backend that ended meanwhile; its successors are forked by the pinned postmaster
  }
}

/**
 * Runs `fn` with SeaweedFS on `cores.store` and this process and every Postgres process (the
 * postmaster too: the backends it forks meanwhile inherit its cores) on `cores.ledger`. Afterwards
 * every process of both groups gets its cores back, however `fn` ends: a backend forked meanwhile
 * gets those its group had.
 */
export async function withStoreApart<T>(cores: CoresApart, fn: () => Promise<T>): Promise<T> {
  const groups = [
    { pids: () => serverProcesses('seaweedfs').map((p) => p.pid), cpus: cores.store.join(',') },
    { pids: () => [process.pid, ...serverProcesses('postgres').map((p) => p.pid)], cpus: cores.ledger.join(',') },
  ].map((g) => {
    const pids = g.pids();
    return { ...g, before: new Map(pids.map((pid) => [pid, maskOf(pid)])) };
  });
  if (groups[0]!.before.size === 0) throw new Error('no SeaweedFS process to pin: is the stack up (npm run stack:up)?');
  try {
    for (const g of groups) for (const pid of g.before.keys()) pin(pid, g.cpus);
    // a line labelled "own cores" that was measured on shared ones would mislead
    if (maskOf(process.pid) !== maskHex(cores.ledger)) throw new Error('could not pin the bench to its cores: taskset (util-linux) is needed');
    return await fn();
  } finally {
    for (const g of groups) {
      const usual = [...g.before.values()].find((m) => m !== undefined);
      for (const pid of g.pids()) {
        const mask = g.before.get(pid) ?? usual;
        if (mask !== undefined) pin(pid, mask, true);
      }
    }
  }
}
