import { migrate } from '../db/migrate.ts';

const url = process.env.CAPTURE_LEDGER_DATABASE_URL;
if (!url) {
  console.error('CAPTURE_LEDGER_DATABASE_URL is not set (copy .env.example to .env)');
  process.exit(1);
}
try {
  const { applied, alreadyApplied } = await migrate(url);
  for (const name of applied) console.log(`applied ${name}`);
  console.log(`database is up to date (${applied.length} applied, ${alreadyApplied.length} already there)`);
} catch (err) {
  console.error((err as Error).message);
  process.exit(1);
}
