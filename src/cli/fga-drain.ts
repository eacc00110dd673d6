// npm run fga:drain: delivers the queued outbox tuples to OpenFGA once and prints what it
// delivered. The worker does the same every minute (schedule outbox-drain); this is the manual
// retry. Exits 1 when a tuple failed or OpenFGA could not be reached (they stay queued).
import { loadConfigOrExit } from '../config/env.ts';
import { createDb } from '../db/connect.ts';
import { createFgaClient } from '../fga/client.ts';
import { drainOutbox } from '../fga/outbox.ts';

const config = loadConfigOrExit();
const db = createDb(config.databaseUrl, 5);
try {
  const fga = createFgaClient(config.fga);
  const result = await drainOutbox(db, fga, {
    onBatch({ delivered, failed }) {
      for (const t of delivered) console.log(`delivered ${t.operation} ${t.user} ${t.relation} ${t.object}`);
      for (const { row: t, error } of failed) console.error(`still queued ${t.operation} ${t.user} ${t.relation} ${t.object}: ${error}`);
    },
  });
  console.log(`delivered ${result.delivered}, failed ${result.failed}, remaining ${result.remaining}`);
  if (result.unavailable !== undefined) console.error(`OpenFGA at ${config.fga.apiUrl} is unavailable: ${result.unavailable}`);
  if (result.failed > 0 || result.unavailable !== undefined) process.exitCode = 1;
} catch (err) {
  console.error((err as Error).message);
  process.exitCode = 1;
} finally {
  await db.destroy();
}
