import tseslint from 'typescript-eslint';

const nodeBuiltins = ['assert', 'buffer', 'child_process', 'crypto', 'dns', 'events', 'fs', 'fs/promises', 'http', 'https', 'net', 'os', 'path', 'process', 'stream', 'timers', 'url', 'util', 'worker_threads', 'zlib'];

export default tseslint.config(
  { ignores: ['node_modules/', '.tools/', '.stack/', 'dist/', 'coverage/'] },
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
    },
  },
  {
    // Workflows are replayed: no I/O, no Node builtins, no clocks or randomness of their own.
    files: ['src/workflows/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: nodeBuiltins.flatMap((m) => [m, `node:${m}`]).map((name) => ({ name, message: 'Node builtins are not allowed in workflows' })),
          patterns: [
            { group: ['../activities/*', '../db/*', '../fga/*', '../s3/*', 'pg', 'kysely', '@aws-sdk/*', '@openfga/*'], allowTypeImports: true, message: 'workflows import activities and I/O modules as types only' },
          ],
        },
      ],
      'no-restricted-globals': ['error', { name: 'setTimeout', message: 'use sleep() from @temporalio/workflow' }, { name: 'setInterval', message: 'use sleep() from @temporalio/workflow' }, { name: 'process', message: 'no process in workflows' }, { name: 'fetch', message: 'no I/O in workflows' }],
      'no-restricted-properties': ['error', { object: 'Math', property: 'random', message: 'use uuid4() from @temporalio/workflow' }],
    },
  },
);
