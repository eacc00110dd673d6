// CPU the stack's processes used, as the benches count it beside wall time: on this machine's two
// cores every process of the stack shares them, so what one side of a comparison costs in CPU is
// what it takes from the other (a busy machine stretches wall time, not the work done).
import { cpuSecondsOf, processesWhere } from '../test/support/processes.ts';

/** The stack's servers a bench may count, each by its command line. */
const SERVERS = {
  seaweedfs: (args: string[]) => /(^|\/)weed$/.test(args[0]!),
  // every backend: Postgres names each by its role (`postgres: capture_ledger …`)
  postgres: (args: string[]) => /^postgres(:|$)/.test(args[0]!) || /(^|\/)postgres$/.test(args[0]!),
  openfga: (args: string[]) => /(^|\/)openfga$/.test(args[0]!),
} as const;

export type Server = keyof typeof SERVERS;

/** The processes of a server of the stack, found by their command lines. */
export function serverProcesses(s: Server): { pid: number; args: string[] }[] {
  return processesWhere(SERVERS[s]);
}

/** CPU seconds so far: this process ('node') and each server named */
export type CpuReading<S extends Server> = Record<'node' | S, number>;

export function cpuReading<S extends Server>(servers: readonly S[]): CpuReading<S> {
  const out = { node: cpuSecondsOf(process.pid) ?? 0 } as CpuReading<S>;
  // with what each process reaped: a Postgres backend or autovacuum worker that ends meanwhile
  // leaves the live processes, and its CPU moves to the postmaster's count of its finished children
  for (const s of servers) out[s] = serverProcesses(s).reduce((n: number, p) => n + (cpuSecondsOf(p.pid, { reaped: true }) ?? 0), 0);
  return out;
}

/** The CPU ms each process used since `before`, and their total. */
export function cpuMsSince<S extends Server>(before: CpuReading<S>): Record<'node' | S | 'total', number> {
  const now = cpuReading(Object.keys(before).filter((k): k is S => k !== 'node'));
  const out = {} as Record<'node' | S | 'total', number>;
  let total = 0;
  for (const k of Object.keys(before) as ('node' | S)[]) {
    out[k] = Math.round((now[k] - before[k]) * 1000);
    total += out[k];
  }
  out.total = total;
  return out;
}
