import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['**/node_modules/**', '**/generated/**', 'bench/results/**', 'outbox/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { process: 'readonly', console: 'readonly', URL: 'readonly' } },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            { group: ['@notify/*/*'], message: 'Import a package through its front door (src/index.ts).' },
            { group: ['**/generated/prisma*'], message: 'Only packages/db talks to the Prisma client.' },
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
