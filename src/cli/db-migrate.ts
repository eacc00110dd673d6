// npm run db:migrate: applies migrations/*.sql in name order, each in one transaction, under an
// advisory lock. Safe to run twice. Runs before fga:deploy, so it reads only the database URL.
import { loadDatabaseUrl } from '../config/env.ts';
import { migrate } from '../db/migrate.ts';

try {
  const { applied, alreadyApplied } = await migrate(loadDatabaseUrl());
  for (const name of applied) console.log(`applied ${name}`);
  console.log(`database is up to date (${applied.length} applied, ${alreadyApplied.length} already there)`);
} catch (err) {
  console.error((err as Error).message);
  process.exitCode = 1;
}
