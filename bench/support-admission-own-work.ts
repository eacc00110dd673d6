// Admission's own work (issue 28): the same admission with every manifest and links artifact read
// from memory, so what it costs is the ledger's own (its facts, parsing, planning, the writes and
// Postgres behind them) and nothing the store does. Beside it, the CPU the goal's ratio leaves an
// admission beyond its reads on these cores: own work well over that room, even with no store to
// share the cores with, cannot meet the goal on this machine. Near 1 the comparison decides
// nothing: the CPU readings carry Postgres's background work and the store's CPU varies by some 5%.
import { mapLimit } from '../src/domain/map-limit.ts';
import type { ObjectRead, ObjectReader } from '../src/s3/object-reader.ts';
import { cpuMsSince, type CpuReading } from './support-cpu.ts';
import type { ObjectRef } from './support-admission-level.ts';

/** Where memoryReader holds an object: its bucket and key, as the store does. */
export const objectAt = (bucket: string, key: string): string => `${bucket}/${key}`;

/** An ObjectReader over objects read before, each at objectAt(): any other is 'missing', and counted. */
export function memoryReader(objects: ReadonlyMap<string, string>): ObjectReader & { missed: () => number } {
  let missed = 0;
  return {
    async read(bucket: string, key: string): Promise<ObjectRead> {
      const text = objects.get(objectAt(bucket, key));
      if (text !== undefined) return { kind: 'ok', text };
      missed += 1;
      return { kind: 'missing' };
    },
    close() {},
    missed: () => missed,
  };
}

/**
 * The CPU in ms an admission may spend beyond its reads and still take at most `ratioGoal` times
 * their time: that long, the machine's cores give ratioGoal × bareSeconds × cores, of which the
 * reads take what they took alone. An upper bound: it counts every core busy all the time.
 */
export function goalRoomCpuMs(ratioGoal: number, bare: { seconds: number; cpuMs: number }, cores: number): number {
  return Math.round(ratioGoal * bare.seconds * cores * 1000 - bare.cpuMs);
}

/** What the level's admission from memory took, and what it used of each process. */
export interface OwnWork {
  seconds: number;
  cpuMs: Record<'node' | 'seaweedfs' | 'postgres' | 'total', number>;
  archivesCreated: number;
  /** reads of a key not read before: 0, or the admission was not the bench's */
  objectsMissed: number;
}

/**
 * The level's objects (each page's manifest and links artifact) read through `reader`, then the
 * level admitted from memory by `admit`, its CPU read by `cpu` (the admission bench's own reading).
 */
export async function measureOwnWork(
  level: { objects: { manifest: ObjectRef; links: ObjectRef }[] },
  read: { reader: ObjectReader; bucket: string; inFlight: number },
  admit: (reader: ObjectReader) => Promise<{ archivesCreated: number }>,
  cpu: () => CpuReading<'seaweedfs' | 'postgres'>,
): Promise<OwnWork> {
  const objects = new Map<string, string>();
  await mapLimit(level.objects, read.inFlight, async (p) => {
    for (const o of [p.manifest, p.links]) objects.set(objectAt(read.bucket, o.key), textOf(await readRef(read.reader, read.bucket, o)));
  });
  const memory = memoryReader(objects);
  const cpu0 = cpu();
  const t0 = performance.now();
  const result = await admit(memory);
  const seconds = (performance.now() - t0) / 1000;
  return { seconds, cpuMs: cpuMsSince(cpu0), archivesCreated: result.archivesCreated, objectsMissed: memory.missed() };
}

/** A seeded object, read at the version it was put (as admission reads it). */
export const readRef = (reader: ObjectReader, bucket: string, o: ObjectRef): Promise<ObjectRead> => reader.read(bucket, o.key, undefined, o.versionId);

/** The text of an object the bench seeded, which must be there. */
export function textOf(read: ObjectRead): string {
  if (read.kind !== 'ok') throw new Error(`bench object not read: ${read.kind}`);
  return read.text;
}
