// The layering, written down: `npm run lint` runs this over src/ (after eslint, which checks each
// file's own imports). dependency-cruiser follows what runs, so a rule here also holds through
// chains of imports: a workflow that reaches a Node builtin by way of a domain module fails, even
// though each import on the way is allowed on its own. Type-only imports vanish at compile time
// and are not followed (tsPreCompilationDeps: false).
import { builtinModules } from 'node:module';

const nodeBuiltin = [`^node:`, `^(${builtinModules.filter((m) => !m.startsWith('_')).join('|')})(/|$)`];
const notTest = '\\.test\\.ts$';

/** An error rule on the modules under `from` (their tests left out) for what they may not import. */
const fromOutsideTests = (name, comment, from, to) => ({ name, comment, severity: 'error', from: { path: from, pathNot: notTest }, to });

export default {
  forbidden: [
    fromOutsideTests('domain-is-pure', 'src/domain is the pure core: it imports nothing of the project above it', '^src/domain/', {
      path: ['^src/(?!domain/)', '^temporal\\.config\\.ts$'],
    }),
    fromOutsideTests(
      'workflow-sandbox',
      'workflows are replayed in a deterministic sandbox: no Node builtin may be reached from one, directly or through what it imports',
      '^src/(flow/)?workflows/',
      { path: nodeBuiltin, reachable: true },
    ),
    fromOutsideTests(
      'workflow-sandbox-no-io',
      'workflows reach activities, stores and clients only through proxies (type imports), never as values',
      '^src/(flow/)?workflows/',
      {
        path: '^src/(api|activities|cli|db|fga|flow/(activities|browser|capture-worker)|ledger|replay|s3|search|store|worker|issuer|http|config)/',
        reachable: true,
      },
    ),
    fromOutsideTests(
      'capture-imports-contract-and-domain',
      'the capture tier (src/flow) is another system than the ledger: from outside its tree it imports only the contract and pure domain modules',
      '^src/flow/',
      { path: '^src/(?!flow/|domain/)' },
    ),
    fromOutsideTests(
      'ledger-never-imports-capture',
      'the ledger and the capture tier meet only in the webhook contract (src/domain/contract)',
      '^src/(?!flow/)',
      { path: '^src/flow/' },
    ),
    fromOutsideTests(
      'below-http-never-imports-api',
      'the ledger, the stores and the domain know nothing of HTTP: they throw their own errors (src/domain/invalid-input, src/domain/state-conflict) and the API maps them to answers',
      '^src/(ledger|store|domain)/',
      { path: '^src/api/' },
    ),
    {
      name: 'no-circular',
      comment: 'a cycle makes the load order matter and the layers meaningless',
      severity: 'error',
      from: { path: '^src/' },
      to: { circular: true },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: false,
    tsConfig: { fileName: 'tsconfig.json' },
    exclude: { path: ['\\.test\\.ts$', '^src/picker/'] },
  },
};
