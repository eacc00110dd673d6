// npm run fga:drain: delivers the queued outbox tuples to OpenFGA once and prints what it
// delivered. The worker does the same every minute (schedule outbox-drain); this is the manual
// retry. Exits 1 when a tuple failed or OpenFGA could not be reached (they stay queued).
// A tuple OpenFGA refused OUTBOX_DEAD_AFTER times is in the dead letter: counted, no longer sent.
// `--retry-dead` puts those back in the queue first (after the model or the tuple was fixed).
import { loadConfigOrExit } from '../config/env.ts';
import { createDb } from '../db/connect.ts';
import { createFgaClient } from '../fga/client.ts';
import { drainOutbox, OUTBOX_DEAD_AFTER, reviveDeadLetters } from '../fga/outbox.ts';

const config = loadConfigOrExit();
const retryDead = process.argv.includes('--retry-dead');
// drainOutbox runs 4 lanes of up to two transactions each (one at OpenFGA, the next locked behind it)
const db = createDb(config.databaseUrl, 9);
try {
  const fga = createFgaClient(config.fga);
  if (retryDead) console.log(`back in the queue from the dead letter: ${await reviveDeadLetters(db)}`);
  const result = await drainOutbox(db, fga, {
    onBatch({ delivered, failed }) {
      for (const t of delivered) console.log(`delivered ${t.operation} ${t.user} ${t.relation} ${t.object}`);
      for (const { row: t, error, dead } of failed) {
        console.error(
          `${dead ? `dead letter (refused ${OUTBOX_DEAD_AFTER} times)` : 'still queued'} ${t.operation} ${t.user} ${t.relation} ${t.object}: ${error}`,
        );
      }
    },
  });
  console.log(`delivered ${result.delivered}, failed ${result.failed}, remaining ${result.remaining}, dead ${result.dead}`);
  if (result.dead > 0)
    console.error(`${result.dead} tuples are in the dead letter (fga_outbox.dead_at set): fix the cause, then npm run fga:drain -- --retry-dead`);
  if (result.unavailable !== undefined) console.error(`OpenFGA at ${config.fga.apiUrl} is unavailable: ${result.unavailable}`);
  if (result.failed > 0 || result.unavailable !== undefined) process.exitCode = 1;
} catch (err) {
  console.error((err as Error).message);
  process.exitCode = 1;
} finally {
  await db.destroy();
}
