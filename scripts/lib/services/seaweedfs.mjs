// SeaweedFS: one `weed server` (master, volume, filer and S3 gateway) under .stack/seaweed, with
// the ledger's bucket and two S3 identities (the ledger's admin key, the capture workers' put-only key).
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { STACK_DIR, ROOT, intSetting, loadEnv } from '../env.mjs';
import { resolveBinary } from '../tools.mjs';
import { s3Request } from '../s3.mjs';

export function s3Settings() {
  const env = loadEnv();
  return {
    endpoint: env.CAPTURE_LEDGER_S3_ENDPOINT,
    region: env.CAPTURE_LEDGER_S3_REGION,
    accessKeyId: env.CAPTURE_LEDGER_S3_ACCESS_KEY_ID,
    secretAccessKey: env.CAPTURE_LEDGER_S3_SECRET_ACCESS_KEY,
    bucket: env.CAPTURE_LEDGER_S3_BUCKET,
  };
}

/** The capture workers' S3 key pair: it may put objects in the bucket, nothing else. */
export function captureWorkerS3Credentials() {
  const env = loadEnv();
  return { accessKeyId: env.CAPTURE_WORKER_S3_ACCESS_KEY_ID, secretAccessKey: env.CAPTURE_WORKER_S3_SECRET_ACCESS_KEY };
}

export const PUT_ONLY_S3_POLICY = 'capture-worker-put-objects';

/**
 * SeaweedFS's identities (its -s3.config file): the ledger's admin, and the capture workers'.
 * The capture identity has a policy, not legacy actions: SeaweedFS's "Write" action covers
 * DeleteObject as well as PutObject (its router checks Write for both), while an attached policy
 * is evaluated by S3 action, so s3:PutObject alone allows PUT and nothing else (GET, HEAD, LIST,
 * DELETE, multipart abort and tagging are other actions).
 */
export function seaweedIdentities(admin, worker, bucket) {
  if (!worker.accessKeyId || !worker.secretAccessKey)
    throw new Error('CAPTURE_WORKER_S3_ACCESS_KEY_ID and CAPTURE_WORKER_S3_SECRET_ACCESS_KEY must both be set (see .env.example)');
  if (worker.accessKeyId === admin.accessKeyId)
    throw new Error('CAPTURE_WORKER_S3_ACCESS_KEY_ID must differ from CAPTURE_LEDGER_S3_ACCESS_KEY_ID: the capture workers get a key of their own');
  const putOnly = { Version: '2012-10-17', Statement: [{ Effect: 'Allow', Action: ['s3:PutObject'], Resource: [`arn:aws:s3:::${bucket}/*`] }] };
  return {
    identities: [
      {
        name: admin.accessKeyId,
        credentials: [{ accessKey: admin.accessKeyId, secretKey: admin.secretAccessKey }],
        actions: ['Admin', 'Read', 'Write', 'List', 'Tagging'],
      },
      {
        name: 'capture-worker',
        credentials: [{ accessKey: worker.accessKeyId, secretKey: worker.secretAccessKey }],
        policyNames: [PUT_ONLY_S3_POLICY],
      },
    ],
    policies: [{ name: PUT_ONLY_S3_POLICY, content: JSON.stringify(putOnly) }],
  };
}

function serverArgs(dir, { s3, master, volume, filer }) {
  return [
    'server',
    `-dir=${dir}/data`,
    '-ip=127.0.0.1',
    '-ip.bind=127.0.0.1',
    `-master.port=${master}`,
    `-volume.port=${volume}`,
    `-filer.port=${filer}`,
    '-master.volumeSizeLimitMB=256',
    // no anonymous statistics to the outside; no Iceberg / Lance listeners
    '-master.telemetry=false',
    // one master: after a restart it re-elects itself in a second, not the default 10
    '-master.electionTimeout=1s',
    '-s3.port.iceberg=0',
    '-s3.port.lance=0',
    '-volume.max=0',
    '-filer',
    '-s3',
    `-s3.port=${s3}`,
    `-s3.config=${dir}/s3.json`,
  ];
}

/** Healthy when a signed ListBuckets answers 200 and an unsigned request is refused. */
async function s3Health(cfg) {
  const r = await s3Request(cfg, 'GET', '/');
  if (r.status !== 200) return `signed ListBuckets: HTTP ${r.status} ${r.body.slice(0, 200)}`;
  const anon = await fetch(new URL('/', cfg.endpoint), { signal: AbortSignal.timeout(3000) });
  await anon.text();
  if (anon.status !== 403) return `an unsigned request was answered ${anon.status}, expected 403 (signatures not verified?)`;
  return true;
}

/**
 * The bucket keeps every version of an object. Capture workers may put any key, so one could put a
 * new object over an archive already admitted; the ledger pins each archive to the version its
 * capture reported (archives.object_version), and signs, reads and deletes that version.
 */
async function enableVersioning(cfg) {
  const body = '<VersioningConfiguration xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Status>Enabled</Status></VersioningConfiguration>';
  const r = await s3Request(cfg, 'PUT', `/${cfg.bucket}`, { query: 'versioning=', body, timeoutMs: 15000 });
  if (r.status !== 200) throw new Error(`could not enable versioning on bucket ${cfg.bucket}: ${r.status} ${r.body.slice(0, 200)}`);
  const got = await s3Request(cfg, 'GET', `/${cfg.bucket}`, { query: 'versioning=', timeoutMs: 15000 });
  if (!got.body.includes('<Status>Enabled</Status>'))
    throw new Error(`bucket ${cfg.bucket} did not keep versioning on: ${got.status} ${got.body.slice(0, 200)}`);
}

async function createBucket(cfg) {
  // the filer may need a moment after S3 answers; retry bucket creation (bounded)
  let last = '';
  const deadline = Date.now() + 60000;
  while (Date.now() < deadline) {
    try {
      const r = await s3Request(cfg, 'PUT', `/${cfg.bucket}`, { timeoutMs: 15000 });
      if (r.status === 200 || r.body.includes('BucketAlreadyOwnedByYou') || r.body.includes('BucketAlreadyExists')) {
        const head = await s3Request(cfg, 'HEAD', `/${cfg.bucket}`, { timeoutMs: 15000 });
        if (head.status === 200) return;
        last = `HEAD /${cfg.bucket}: ${head.status}`;
      } else last = `PUT /${cfg.bucket}: ${r.status} ${r.body.slice(0, 200)}`;
    } catch (err) {
      last = `PUT /${cfg.bucket}: ${err.message}`;
    }
    await new Promise((res) => setTimeout(res, 500));
  }
  throw new Error(`could not create bucket ${cfg.bucket} within 60 s (${last})`);
}

export function seaweedfsSpec() {
  const s3 = intSetting('CAPTURE_LEDGER_S3_PORT');
  // SeaweedFS's internal servers take the next ports after S3 (and +10000 for their gRPC).
  const master = s3 + 1;
  const volume = s3 + 2;
  const filer = s3 + 3;
  const tool = resolveBinary('weed');
  const dir = STACK_DIR + 'seaweed';
  const cfg = s3Settings();
  const identitiesFile = dir + '/s3.json';
  // an identity makes SeaweedFS verify every signature (with none it allows everything)
  const identities = JSON.stringify(seaweedIdentities(cfg, captureWorkerS3Credentials(), cfg.bucket), null, 2) + '\n';
  const internal = (port, what) => ({ setting: `CAPTURE_LEDGER_S3_PORT + ${port - s3} (${what})`, port });
  return {
    name: 'seaweedfs',
    ports: [
      { setting: 'CAPTURE_LEDGER_S3_PORT', port: s3 },
      internal(master, 'master'),
      internal(volume, 'volume'),
      internal(filer, 'filer'),
      { setting: 'CAPTURE_LEDGER_S3_PORT + 10000 (s3 gRPC)', port: s3 + 10000 },
      { ...internal(master + 10000, 'master gRPC') },
      { ...internal(volume + 10000, 'volume gRPC') },
      { ...internal(filer + 10000, 'filer gRPC') },
    ],
    timeoutMs: 90000,
    tool,
    missing: 'weed (npm run tools builds it into .tools/bin)',
    match: 'weed',
    prepare() {
      mkdirSync(dir + '/data', { recursive: true });
      writeFileSync(identitiesFile, identities, { mode: 0o600 });
    },
    // SeaweedFS reads its -s3.config file once, at start: a running one whose file (written
    // when it started) differs from today's identities is restarted with the new file
    staleConfig() {
      const running = existsSync(identitiesFile) ? readFileSync(identitiesFile, 'utf8') : '';
      return running === identities ? null : `its S3 identities changed (${identitiesFile.slice(ROOT.length)})`;
    },
    command() {
      return [tool.path, serverArgs(dir, { s3, master, volume, filer })];
    },
    async health() {
      return s3Health(cfg);
    },
    async afterHealthy(log) {
      await createBucket(cfg);
      await enableVersioning(cfg);
      log(`seaweedfs: bucket ${cfg.bucket} ready (versioned)`);
    },
    url: `${cfg.endpoint} (bucket ${cfg.bucket})`,
  };
}
