// Lint rules for the whole repo. The one architectural rule that matters most lives here:
// lib/ is pure domain code and may import nothing that does I/O or renders.
import nextVitals from 'eslint-config-next/core-web-vitals';
import nextTs from 'eslint-config-next/typescript';

const sdkPatterns = [
  'next',
  'next/*',
  'react',
  'react/*',
  'react-dom',
  'react-dom/*',
  '@kubernetes/*',
  '@azure/*',
  'better-sqlite3',
  'pg',
  '@tanstack/*',
  'node:*',
  'fs',
  'fs/*',
  'http',
  'https',
  'net',
  'child_process',
  'server-only',
];

const config = [
  {
    ignores: ['.next/**', 'node_modules/**', 'next-env.d.ts', 'coverage/**', 'test-results/**', 'playwright-report/**'],
  },
  ...nextVitals,
  ...nextTs,
  {
    rules: {
      '@typescript-eslint/consistent-type-imports': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      // Modules form layers, not rings: a cycle makes load order matter and hides which room owns what.
      'import/no-cycle': ['error', { ignoreExternal: true }],
    },
  },
  {
    files: ['lib/**/*.{ts,tsx}'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            { group: sdkPatterns, message: 'lib/ is pure: no framework, SDK or I/O imports.' },
            {
              group: [
                '@/server/*',
                '@/sim/*',
                '@/app/*',
                '@/components/*',
                '../server/*',
                '../sim/*',
                '../app/*',
                '../components/*',
                '../../*',
              ],
              message: 'lib/ imports only lib/.',
            },
          ],
        },
      ],
    },
  },
];

export default config;
