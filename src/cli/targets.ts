// npm run targets -- add|list|disable <org> <url>   (see targets-command.ts)
import { loadConfigOrExit } from '../config/env.ts';
import { createDb } from '../db/connect.ts';
import { runTargets } from './targets-command.ts';
import { createAddressPolicy } from '../domain/address-policy.ts';

const config = loadConfigOrExit();
const db = createDb(config.databaseUrl, 1);
try {
  process.exitCode = await runTargets(
    db,
    process.argv.slice(2),
    { out: (l) => console.log(l), err: (l) => console.error(l) },
    createAddressPolicy(config.capture.allow, config.capture.deniedPorts),
  );
} catch (err) {
  console.error((err as Error).message);
  process.exitCode = 1;
} finally {
  await db.destroy();
}
