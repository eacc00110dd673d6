// Private instances of real services for fault tests: the shared stack is never stopped (other
// test files use it at the same time). A fault test gives the component under test a private
// instance and kills and restarts that one, on the same port, so clients keep their address.
//
//   const s3gw = await startPrivateS3Gateway();   // a second `weed s3` on the shared filer
//   const fga = await startPrivateOpenFga();      // a second `openfga run` on the shared datastore
//   await s3gw.stop(); ... await s3gw.start(); ... await s3gw.close();
//
// Both see exactly the data the shared instance sees (the same filer, the same datastore).
import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, existsSync, mkdirSync } from 'node:fs';
import { createServer } from 'node:net';
import { datastoreEnv, openfgaRunArgs } from '../../scripts/lib/services.mjs';
import { ROOT, loadProjectEnv } from './env.ts';

export interface PrivateService {
  /** http://127.0.0.1:port — stays the same across stop/start */
  url: string;
  port: number;
  readonly running: boolean;
  /** the process's pid while running */
  readonly pid: number | undefined;
  /** kill the process (SIGKILL: it is down, not shutting down politely) and wait for it to exit */
  stop(): Promise<void>;
  /** start it again on the same ports and wait until it answers */
  start(): Promise<void>;
  close(): Promise<void>;
}

/** A port nobody listens on right now. */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as { port: number };
      srv.close(() => resolve(port));
    });
  });
}

async function waitFor(what: string, check: () => Promise<boolean>, child: ChildProcess, logFile: string, timeoutMs = 30_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null)
      throw new Error(`${what} exited (${child.exitCode ?? child.signalCode}) before answering; log: ${logFile}`);
    if (await check().catch(() => false)) return;
    if (Date.now() > until) throw new Error(`${what} did not answer within ${timeoutMs} ms; log: ${logFile}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

function privateService(
  name: string,
  port: number,
  command: () => [string, string[], NodeJS.ProcessEnv?],
  healthy: (url: string) => Promise<boolean>,
): PrivateService {
  let child: ChildProcess | undefined;
  const url = `http://127.0.0.1:${port}`;
  const dir = `${ROOT}.stack/test/private`;
  mkdirSync(dir, { recursive: true });
  const logFile = `${dir}/${name}-${port}.log`;
  const svc: PrivateService = {
    url,
    port,
    get running() {
      return child !== undefined && child.exitCode === null && child.signalCode === null;
    },
    get pid() {
      return svc.running ? child!.pid : undefined;
    },
    async start() {
      if (svc.running) return;
      const [cmd, args, env] = command();
      if (!existsSync(cmd)) throw new Error(`${cmd} is missing (npm run tools builds it)`);
      const out = createWriteStream(logFile, { flags: 'a' });
      const c = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'], ...(env !== undefined ? { env } : {}) });
      c.stdout!.pipe(out);
      c.stderr!.pipe(out);
      child = c;
      // never outlive the test process
      const reap = (): void => {
        if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
      };
      process.once('exit', reap);
      c.once('exit', () => process.off('exit', reap));
      await waitFor(`private ${name} on ${url}`, () => healthy(url), c, logFile);
    },
    async stop() {
      const c = child;
      if (c === undefined || c.exitCode !== null || c.signalCode !== null) return;
      const exited = new Promise<void>((r) => c.once('exit', () => r()));
      c.kill('SIGKILL');
      await exited;
      // the port must really be free again before a client is told "it is down"
      for (let i = 0; i < 50; i++) {
        const refused = await fetch(url, { signal: AbortSignal.timeout(500) }).then(
          () => false,
          () => true,
        );
        if (refused) return;
        await new Promise((r) => setTimeout(r, 100));
      }
    },
    async close() {
      await svc.stop();
    },
  };
  return svc;
}

/**
 * A second S3 gateway (`weed s3`) in front of the shared SeaweedFS filer, with the same
 * identities: the same bucket and objects, signatures verified, its own port.
 */
export async function startPrivateS3Gateway(): Promise<PrivateService> {
  loadProjectEnv();
  const s3Port = Number(process.env.CAPTURE_LEDGER_S3_PORT);
  const filer = `127.0.0.1:${s3Port + 3}`;
  const [port, grpc] = [await freePort(), await freePort()];
  const svc = privateService(
    'weed-s3',
    port,
    () => [
      `${ROOT}.tools/bin/weed`,
      [
        's3',
        `-filer=${filer}`,
        `-port=${port}`,
        `-port.grpc=${grpc}`,
        '-port.iceberg=0',
        '-port.lance=0',
        '-ip.bind=127.0.0.1',
        `-config=${ROOT}.stack/seaweed/s3.json`,
      ],
    ],
    // an unsigned request is refused (403) once the gateway serves: signatures are checked
    async (url) => (await fetch(url, { signal: AbortSignal.timeout(1000) })).status === 403,
  );
  await svc.start();
  return svc;
}

/** A second OpenFGA server on the shared datastore: every store and tuple is the same. */
export async function startPrivateOpenFga(): Promise<PrivateService> {
  loadProjectEnv();
  const datastore = process.env.CAPTURE_LEDGER_FGA_DATABASE_URL!;
  const [port, grpc] = [await freePort(), await freePort()];
  const svc = privateService(
    'openfga',
    port,
    () => [`${ROOT}.tools/bin/openfga`, openfgaRunArgs(port, grpc), datastoreEnv(datastore)],
    async (url) => {
      const res = await fetch(`${url}/healthz`, { signal: AbortSignal.timeout(1000) });
      return res.ok && (await res.text()).includes('SERVING');
    },
  );
  await svc.start();
  return svc;
}
