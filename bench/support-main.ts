// A bench module run as a script (`node bench/<name>.ts [--pages N]`): the page count from the
// command line, each record printed as a JSON line, exit 1 when a record says it missed its goal.
import { fileURLToPath } from 'node:url';

/** Whether the module at `moduleUrl` is the script node was started with. */
export function isMain(moduleUrl: string): boolean {
  return process.argv[1] !== undefined && fileURLToPath(moduleUrl) === process.argv[1];
}

/** `--pages N` (default `fallback`), at least `min`; exits 2 naming the rule otherwise. */
export function pagesArg(fallback: number, min: number): number {
  const i = process.argv.indexOf('--pages');
  const pages = i >= 0 ? Number(process.argv[i + 1]) : fallback;
  if (!Number.isInteger(pages) || pages < min) {
    console.error(`--pages must be a whole number ≥ ${min}`);
    process.exit(2);
  }
  return pages;
}

export function printAndExit(records: Promise<{ ok?: boolean }[]>): void {
  records.then(
    (rs) => {
      for (const r of rs) console.log(JSON.stringify(r));
      process.exit(rs.every((r) => r.ok !== false) ? 0 : 1);
    },
    (err: unknown) => {
      console.error(err);
      process.exit(1);
    },
  );
}
