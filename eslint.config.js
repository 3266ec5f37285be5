// Lint setup: type-aware where cheap, node: imports, type-only imports kept apart, no console in src/.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['node_modules/', 'data/', 'coverage/', 'bench/.prof/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { process: 'readonly', console: 'readonly', URL: 'readonly' } },
    rules: {
      '@typescript-eslint/consistent-type-imports': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'no-restricted-imports': [
        'error',
        { patterns: [{ regex: '^(fs|path|crypto|http|https|net|os|url|util|events|stream|child_process|assert|tls|zlib|timers)(/.*)?$', message: 'Use the node: protocol.' }] },
      ],
    },
  },
  { files: ['src/**/*.ts'], ignores: ['src/cli/**'], rules: { 'no-console': 'error' } },
  // Tests read JSON response bodies whose shape the assertions themselves check.
  { files: ['test/**/*.ts'], rules: { '@typescript-eslint/no-explicit-any': 'off' } },
);
