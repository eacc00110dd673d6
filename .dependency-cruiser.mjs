// The layering, written down: `npm run lint` runs this over src/ (after eslint, which checks each
// file's own imports). dependency-cruiser follows what runs, so a rule here also holds through
// chains of imports: a workflow that reaches a Node builtin by way of a domain module fails, even
// though each import on the way is allowed on its own. Type-only imports vanish at compile time
// and are not followed (tsPreCompilationDeps: false).
import { builtinModules } from 'node:module';

const nodeBuiltin = [`^node:`, `^(${builtinModules.filter((m) => !m.startsWith('_')).join('|')})(/|$)`];
const notTest = '\\.test\\.ts$';

export default {
  forbidden: [
    {
      name: 'domain-is-pure',
      comment: 'src/domain is the pure core: it imports nothing of the project above it',
      severity: 'error',
      from: { path: '^src/domain/', pathNot: notTest },
      to: { path: ['^src/(?!domain/)', '^temporal\\.config\\.ts$'] },
    },
    {
      name: 'workflow-sandbox',
      comment: 'workflows are replayed in a deterministic sandbox: no Node builtin may be reached from one, directly or through what it imports',
      severity: 'error',
      from: { path: '^src/(flow/)?workflows/', pathNot: notTest },
      to: { path: nodeBuiltin, reachable: true },
    },
    {
      name: 'workflow-sandbox-no-io',
      comment: 'workflows reach activities, stores and clients only through proxies (type imports), never as values',
      severity: 'error',
      from: { path: '^src/(flow/)?workflows/', pathNot: notTest },
      to: {
        path: '^src/(api|activities|cli|db|fga|flow/(activities|browser|capture-worker)|ledger|replay|s3|search|store|worker|issuer|http|config)/',
        reachable: true,
      },
    },
    {
      name: 'capture-imports-contract-and-domain',
      comment: 'the capture tier (src/flow) is another system than the ledger: from outside its tree it imports only the contract and pure domain modules',
      severity: 'error',
      from: { path: '^src/flow/', pathNot: notTest },
      to: { path: '^src/(?!flow/|domain/)' },
    },
    {
      name: 'ledger-never-imports-capture',
      comment: 'the ledger and the capture tier meet only in the webhook contract (src/domain/contract)',
      severity: 'error',
      from: { path: '^src/(?!flow/)', pathNot: notTest },
      to: { path: '^src/flow/' },
    },
    {
      name: 'below-http-never-imports-api',
      comment:
        'the ledger, the stores and the domain know nothing of HTTP: they throw their own errors (src/domain/invalid-input, src/domain/state-conflict) and the API maps them to answers',
      severity: 'error',
      from: { path: '^src/(ledger|store|domain)/', pathNot: notTest },
      to: { path: '^src/api/' },
    },
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
