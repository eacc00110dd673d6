// npm run fga:grant <relation> <user> <org> / npm run fga:revoke <relation> <user> <org>
// (package.json passes grant or revoke as the first argument). See src/fga/grant.ts.
import { loadConfigOrExit } from '../config/env.ts';
import { createFgaClient } from '../fga/client.ts';
import { runGrantCli } from '../fga/grant.ts';

process.exitCode = await runGrantCli(process.argv.slice(2), () => createFgaClient(loadConfigOrExit().fga), {
  out: (line) => console.log(line),
  err: (line) => console.error(line),
});
