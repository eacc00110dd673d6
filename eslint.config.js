import { builtinModules } from 'node:module';
import prettierOff from 'eslint-config-prettier';
import tseslint from 'typescript-eslint';

// every Node builtin, with and without the node: prefix (some exist only with it)
const nodeBuiltins = [...new Set(builtinModules.map((m) => m.replace(/^node:/, '')))].flatMap((m) => [m, `node:${m}`]);

// What a workflow file may import values from: the workflow SDK, other workflow files, pure
// domain logic, the shared names in temporal.config.ts and the search-attribute keys. Everything
// else (activities, stores, clients) only as types.
const WORKFLOW_VALUE_IMPORTS = ['@temporalio/workflow', './', '../domain/', '../../temporal.config.ts', '../temporal/search-attributes.ts'];
const escape = (s) => s.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
const notAllowedInWorkflows = `^(?!${WORKFLOW_VALUE_IMPORTS.map((p) => (p.endsWith('/') ? escape(p) : `${escape(p)}$`)).join('|')})`;

// The capture tier (src/flow) is another system than the ledger: it imports only the contract and
// pure domain modules from outside its tree, and nothing of the ledger imports it. Relative paths
// are matched per folder depth (eslint does not resolve them).
const leaves = (depth) => '^' + '\\.\\./'.repeat(depth);
const captureBoundary = (depth) => ({
  files: [`src/flow/${'*/'.repeat(depth - 1)}*.ts`],
  ignores: ['src/flow/**/*.test.ts'],
  rules: {
    '@typescript-eslint/no-restricted-imports': [
      'error',
      {
        patterns: [
          { regex: `${leaves(depth)}(?!domain/)`, message: 'the capture tier imports only the contract and pure src/domain modules from outside src/flow' },
        ],
      },
    ],
  },
});
const ledgerLeavesCapture = (depth) => ({
  files: [`src/${'*/'.repeat(depth)}*.ts`],
  ignores: ['src/flow/**'],
  rules: {
    'no-restricted-imports': [
      'error',
      {
        patterns: [{ regex: `${leaves(depth)}flow/`, message: 'the ledger never imports the capture tier (src/flow): they meet only in the webhook contract' }],
      },
    ],
  },
});
const domainStaysPure = (depth) => ({
  files: [`src/domain/${'*/'.repeat(depth - 1)}*.ts`],
  ignores: ['src/domain/**/*.test.ts'],
  rules: {
    'no-restricted-imports': ['error', { patterns: [{ regex: `${leaves(depth)}(?!domain/)`, message: 'src/domain is pure: it imports nothing above it' }] }],
  },
});

// Workflows are replayed: no clocks, timers, randomness or I/O of their own (both tiers' workflows).
const WORKFLOW_DETERMINISM = {
  'no-restricted-globals': [
    'error',
    { name: 'setTimeout', message: 'use sleep() from @temporalio/workflow' },
    { name: 'setInterval', message: 'use sleep() from @temporalio/workflow' },
    { name: 'process', message: 'no process in workflows' },
    { name: 'fetch', message: 'no I/O in workflows' },
  ],
  'no-restricted-properties': ['error', { object: 'Math', property: 'random', message: 'use uuid4() from @temporalio/workflow' }],
};

export default tseslint.config(
  // dot directories hold tools, stack data and scratch work (.tools/, .stack/ ...), not the project's code
  { ignores: ['node_modules/', '.*/', 'dist/', 'coverage/'] },
  ...tseslint.configs.recommended,
  // layout is the formatter's (npm run format); eslint keeps to what code means
  prettierOff,
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
    },
  },
  {
    // type-aware: a promise nobody awaits loses its rejection (the files tsconfig.json includes;
    // a scratch file elsewhere is linted without types)
    files: ['{src,test,bench,scripts}/**/*.ts', 'temporal.config.ts', 'vitest.config.ts'],
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
    },
  },
  {
    // Workflows are replayed: no I/O, no Node builtins, no clocks or randomness of their own.
    files: ['src/workflows/**/*.ts'],
    ignores: ['src/workflows/**/*.test.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          paths: nodeBuiltins.map((name) => ({ name, message: 'Node builtins are not allowed in workflows' })),
          patterns: [
            {
              regex: notAllowedInWorkflows,
              allowTypeImports: true,
              message: `workflows import values only from ${WORKFLOW_VALUE_IMPORTS.join(', ')}; anything else as types only`,
            },
          ],
        },
      ],
      ...WORKFLOW_DETERMINISM,
    },
  },
  {
    // a function a newcomer can read in one screen
    files: ['src/**/*.ts'],
    ignores: ['src/**/*.test.ts'],
    rules: {
      complexity: ['error', 15],
      'max-lines-per-function': ['error', { max: 80 }],
    },
  },
  captureBoundary(1),
  captureBoundary(2),
  captureBoundary(3),
  ledgerLeavesCapture(1),
  ledgerLeavesCapture(2),
  domainStaysPure(1),
  domainStaysPure(2),
  {
    // the capture tier's workflows are replayed too
    files: ['src/flow/workflows/**/*.ts'],
    ignores: ['src/flow/workflows/**/*.test.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          paths: nodeBuiltins.map((name) => ({ name, message: 'Node builtins are not allowed in workflows' })),
          patterns: [
            {
              regex: `^(?!@temporalio/workflow$|\\./|\\.\\./\\.\\./domain/|\\.\\./level\\.ts$|\\.\\./names\\.ts$)`,
              allowTypeImports: true,
              message:
                'capture workflows import values only from @temporalio/workflow, ./, ../../domain/, ../level.ts and ../names.ts; anything else as types only',
            },
          ],
        },
      ],
      ...WORKFLOW_DETERMINISM,
    },
  },
);
