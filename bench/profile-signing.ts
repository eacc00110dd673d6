// Profile: where the API's CPU goes while it signs (POST /api/archives/:id/url, 32 callers). The
// API runs as its own process under --cpu-prof; its samples are summed by self time per part
// (JWT verification, the OpenFGA client, the row lookup, the presigner, fastify and its logger,
// the event loop's own work, idle), so a change can be judged by the share it removes.
//
//   node bench/profile-signing.ts     (or npm run bench -- profile-signing)
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { drain, insertJob, insertManyArchives } from '../test/support/ledger.ts';
import { printLines } from './support-crawl.ts';
import { closedLoop, keepAlivePost, startBenchApi } from './support-api.ts';
import { load1Now, round } from './support-figures.ts';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string };
}
interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

/** Where packages' frames go, read in order: the first part that names a package, or a prefix of its name, takes it. */
const PACKAGE_PARTS: { part: string; names?: string[]; prefixes?: string[] }[] = [
  { part: 'jwt (jose)', names: ['jose'] },
  { part: 'openfga client (sdk, axios)', names: ['@openfga/sdk', 'axios'], prefixes: ['@opentelemetry'] },
  { part: 'row lookup (pg, kysely)', names: ['pg', 'pg-protocol', 'kysely'], prefixes: ['pg-'] },
  { part: 'presign (aws sdk)', prefixes: ['@aws-sdk', '@smithy', '@aws-crypto'] },
  { part: 'logging and serialising', names: ['pino', 'sonic-boom', 'fast-json-stringify', 'thread-stream'], prefixes: ['pino-'] },
  { part: 'fastify', names: ['fastify', 'find-my-way', 'light-my-request', 'avvio', 'ajv'], prefixes: ['@fastify'] },
];

/** A frame with no script URL: V8's own entries by their names, anything else native code. */
function nativePart(functionName: string): string {
  if (functionName === '(idle)') return 'idle';
  if (functionName === '(garbage collector)') return 'gc';
  if (functionName.startsWith('(')) return functionName;
  return `native: ${functionName || 'anonymous'}`;
}

/** A frame in node_modules: the part its package belongs to, else the package itself. */
function packagePart(pkg: string): string {
  const rule = PACKAGE_PARTS.find(({ names = [], prefixes = [] }) => names.includes(pkg) || prefixes.some((p) => pkg.startsWith(p)));
  return rule?.part ?? `other: ${pkg}`;
}

/** A frame in Node's own modules: the first two levels of its path, past internal/. */
function nodePart(url: string): string {
  return `node: ${url
    .slice(5)
    .replace(/^internal\//, '')
    .split('/')
    .slice(0, 2)
    .join('/')}`;
}

/** The part of the process a frame belongs to, from its script URL. */
export function partOf(frame: ProfileNode['callFrame']): string {
  const { url, functionName } = frame;
  if (url === '') return nativePart(functionName);
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url)?.[1];
  if (pkg !== undefined) return packagePart(pkg);
  if (url.includes('/src/')) return `ours: ${url.slice(url.indexOf('/src/') + 1)}`;
  if (url.startsWith('node:')) return nodePart(url);
  return 'other';
}

export async function run(opts: { requests?: number; concurrency?: number } = {}): Promise<Record<string, unknown>[]> {
  const requests = opts.requests ?? 3000;
  const concurrency = opts.concurrency ?? 32;
  const load1 = load1Now();
  const dir = mkdtempSync(join(tmpdir(), 'cl-profile-'));
  const api = await startBenchApi({ nodeArgs: ['--cpu-prof', `--cpu-prof-dir=${dir}`] });
  let load;
  try {
    const job = await insertJob(api.deps.db, { orgId: 'acme', submittedBy: 'alice' });
    const ids = await insertManyArchives(api.deps.db, job, api.deps.config.s3.bucket, 1000);
    await drain(api.deps.db, api.deps.fga);
    const headers = await api.headersFor('bob', ['acme']);
    const post = keepAlivePost(concurrency);
    const sign = async () => (await post(`${api.url}/api/archives/${ids[Math.floor(Math.random() * ids.length)]!}/url`, headers)).status === 200;
    await closedLoop(300, concurrency, sign);
    load = await closedLoop(requests, concurrency, sign);
    post.close();
  } finally {
    await api.close();
  }
  try {
    const file = readdirSync(dir).find((f) => f.endsWith('.cpuprofile'));
    if (file === undefined) throw new Error('profile-signing: the API wrote no .cpuprofile');
    const profile = JSON.parse(readFileSync(join(dir, file), 'utf8')) as CpuProfile;
    const byId = new Map(profile.nodes.map((n) => [n.id, n]));
    const us = new Map<string, number>();
    profile.samples.forEach((id, i) => {
      const part = partOf(byId.get(id)!.callFrame);
      us.set(part, (us.get(part) ?? 0) + (profile.timeDeltas[i] ?? 0));
    });
    const busy = [...us].filter(([k]) => k !== 'idle').reduce((a, [, v]) => a + v, 0);
    const parts = [...us].filter(([k]) => k !== 'idle').sort((a, b) => b[1] - a[1]);
    return [
      { bench: 'profile-signing', kind: 'load', ...load, load1 },
      {
        bench: 'profile-signing',
        kind: 'cpu',
        load1,
        busyMs: round(busy / 1000, 0),
        idleMs: round((us.get('idle') ?? 0) / 1000, 0),
        cpuPerRequestMs: round(busy / 1000 / (requests + 300), 3),
        shares: Object.fromEntries(parts.slice(0, 20).map(([k, v]) => [k, `${round((v / busy) * 100, 1)}%`])),
      },
    ];
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) printLines(await run());
