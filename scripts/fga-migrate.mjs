// npm run fga:migrate — applies OpenFGA's schema to CAPTURE_LEDGER_FGA_DATABASE_URL
// (stack:up also runs it before it starts OpenFGA).
import { fgaMigrate } from './lib/fga-migrate.mjs';

try {
  const log = await fgaMigrate();
  console.log(`fga:migrate: OpenFGA schema is up to date (log: ${log})`);
} catch (err) {
  console.error(err.message);
  process.exit(1);
}
