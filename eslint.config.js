// Lint setup: type-aware where cheap, node: imports, type-only imports kept apart, no console in src/.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

const nodeProtocol = {
  regex: '^(fs|path|crypto|http|https|net|os|url|util|events|stream|child_process|assert|tls|zlib|timers)(/.*)?$',
  message: 'Use the node: protocol.',
};

/**
 * The folders are the architecture (docs/architecture.md): dependencies point inward, to core. Each
 * layer lists what it must not import; a file-group rule replaces the general one, so the node:
 * pattern is repeated in each.
 */
const layer = (folder, forbidden, why, extra = [sqlInStorageOnly]) => ({
  files: [`src/${folder}/**/*.ts`],
  rules: { 'no-restricted-imports': ['error', { patterns: [nodeProtocol, { regex: forbidden, message: why }, ...extra] }] },
});

/** SQL and the database drivers stay in the storage folders; everything else calls their stores. */
const sqlInStorageOnly = {
  regex: '^(node:sqlite|kysely|pg)(/.*)?$',
  message: 'Database access lives in a storage folder (src/core/storage, src/mesh/storage); call a store.',
};

export default tseslint.config(
  { ignores: ['node_modules/', 'data/', 'coverage/', 'bench/.prof/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { process: 'readonly', console: 'readonly', URL: 'readonly' } },
    rules: {
      '@typescript-eslint/consistent-type-imports': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'no-restricted-imports': ['error', { patterns: [nodeProtocol] }],
    },
  },
  { files: ['src/**/*.ts'], ignores: ['src/cli/**'], rules: { 'no-console': 'error' } },
  layer('core', '(^|/)(registry|mesh|console|mcp|cli|service|client)/', 'core is shared by every part and depends on none of them.'),
  layer('core/storage', '(^|/)(registry|mesh|console|mcp|cli|service|client)/', 'core is shared by every part and depends on none of them.', []),
  layer('registry', '(^|/)(mesh|console|mcp|cli|service|client)/', 'The registry depends only on core.'),
  layer('mesh', '(^|/)(registry|console|mcp|cli|service)/', 'The mesh reaches the registry over HTTP (client), never its code.'),
  layer('mesh/storage', '(^|/)(registry|console|mcp|cli|service)/', 'The mesh reaches the registry over HTTP (client), never its code.', []),
  layer('mcp', '(^|/)(mesh|console|cli|service)/|(^|/)registry/(?!schemas/|keys/api-key-format\\.ts)', 'The MCP server is a registry client: the wire schemas, nothing else of the registry.'),
  layer('client', '(^|/)(mesh|console|mcp|cli|service)/|(^|/)registry/(?!schemas/)', 'The client knows the registry by its wire schemas alone.'),
  // The console still imports some registry modules beyond the schemas (issue 18 narrows it).
  layer('console', '(^|/)(mesh|cli|service)/', 'The console is a registry client; it does not reach the mesh or the entry points.'),
  // The entry points assemble the parts and may import any of them, but not the database drivers.
  { files: ['src/cli/**/*.ts', 'src/service/**/*.ts'], rules: { 'no-restricted-imports': ['error', { patterns: [nodeProtocol, sqlInStorageOnly] }] } },
  // Tests read JSON response bodies whose shape the assertions themselves check.
  { files: ['test/**/*.ts'], rules: { '@typescript-eslint/no-explicit-any': 'off' } },
);
