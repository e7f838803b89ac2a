import js from '@eslint/js';
import tseslint from 'typescript-eslint';

const FRONT_DOORS = [
  // @notify/core/basics: core's modules that import nothing, for what must load small (packages/core/src/basics.ts).
  // @notify/mail/testing: the test SMTP server and secrets, for tests in packages/ and test/ alike.
  { group: ['@notify/*/*', '!@notify/core/basics', '!@notify/mail/testing'], message: 'Import a package through its front door (src/index.ts).' },
  { group: ['**/generated/prisma*'], message: 'Only packages/db talks to the Prisma client.' },
];

export default tseslint.config(
  { ignores: ['**/node_modules/**', '**/dist/**', '**/generated/**', 'bench/results/**', 'outbox/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { process: 'readonly', console: 'readonly', URL: 'readonly' } },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'no-restricted-imports': ['error', { patterns: FRONT_DOORS }],
    },
  },
  {
    // The pipeline works through @notify/db's named operations: no SQL, no driver, no Prisma.
    files: ['packages/pipeline/**'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: [
            { name: 'pg', message: 'The pipeline runs SQL only through @notify/db named operations (packages/db/src/sql).' },
          ],
          patterns: [
            ...FRONT_DOORS,
            { group: ['pg/*', 'pg-*'], message: 'The pipeline runs SQL only through @notify/db named operations (packages/db/src/sql).' },
            { group: ['@prisma/*'], message: 'Only packages/db talks to the Prisma client.' },
          ],
        },
      ],
    },
  },
  {
    // An app is an entry point: what two apps need lives in a package. apps/server alone composes
    // the others into one process.
    files: ['apps/api/**', 'apps/cli/**', 'apps/worker/**', 'packages/**'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: ['@notify/api', '@notify/cli', '@notify/worker', '@notify/server'].map((name) => ({ name, message: 'No app imports another: move what both need into a package.' })),
          patterns: FRONT_DOORS,
        },
      ],
    },
  },
  {
    // A compose thread loads what @notify/mail imports: values from core come through its small door.
    files: ['packages/mail/src/**'],
    ignores: ['**/*.test.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          paths: [
            {
              name: '@notify/core',
              allowTypeImports: true,
              message: "Import core's values from @notify/core/basics: the front door loads typebox and ajv, 0.3–0.4 s of CPU and ~17 MB more for each compose thread.",
            },
          ],
        },
      ],
    },
  },
  {
    files: ['packages/db/src/**'],
    rules: { 'no-restricted-imports': 'off' },
  },
);
