// npm run fga:reconcile [-- --since-days <n>]: registers the captures that were reported but did
// not make it into the ledger, from exactly the manifest keys the level reports recorded (it
// never walks the bucket). Prints pending, registered, skipped and missing. The archives' tuples
// are queued in the same transaction; `npm run fga:drain` (or the outbox-drain schedule)
// delivers them. The worker runs the same thing daily (schedule `reconcile`).
// Exits 2 on bad arguments, 1 when a manifest could not be read (the store was unreachable).
import { loadConfigOrExit } from '../config/env.ts';
import { createDb } from '../db/connect.ts';
import { formatReconcileResult, parseReconcileArgs, reconcile, type ReconcileOptions } from '../ledger/reconcile.ts';
import { createS3 } from '../s3/client.ts';

let opts: ReconcileOptions;
try {
  opts = parseReconcileArgs(process.argv.slice(2));
} catch (err) {
  console.error((err as Error).message);
  process.exit(2);
}

const config = loadConfigOrExit();
const db = createDb(config.databaseUrl, 2);
const s3 = createS3(config.s3);
try {
  const result = await reconcile(
    { db, s3, bucket: config.s3.bucket, log: { warn: (msg, meta) => console.error(`${msg} ${JSON.stringify(meta ?? {})}`) } },
    opts,
  );
  for (const line of formatReconcileResult(result)) console.log(line);
  if (result.registered > 0) console.log(`their tuples are queued; npm run fga:drain delivers them now`);
  if (result.unreadable > 0) process.exitCode = 1;
} catch (err) {
  console.error((err as Error).message);
  process.exitCode = 1;
} finally {
  s3.destroy();
  await db.destroy();
}
