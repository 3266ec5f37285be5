// Lint setup: type-aware where cheap, node: imports, type-only imports kept apart, no console in src/.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import boundaries from 'eslint-plugin-boundaries';

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
  message: 'Database access lives in a storage folder (src/registry/storage, src/mesh/storage); call a store.',
};

/**
 * The registry's features (docs/architecture.md, "The registry's features"): each folder under
 * src/registry/ is a feature, except the platform it stands on (http/, storage/) and the composition root
 * (plugins/, app.ts, server.ts). A feature's routes are its `*-routes.ts` files: the only files of a
 * feature that speak HTTP.
 */
const registryFeatures = {
  files: ['src/registry/**/*.ts'],
  plugins: { boundaries },
  settings: {
    'boundaries/include': ['src/registry/**/*.ts'],
    'boundaries/legacy-templates': false,
    'boundaries/elements': [
      { type: 'composition-root', pattern: 'src/registry/plugins' },
      { type: 'http', pattern: 'src/registry/http' },
      { type: 'storage', pattern: 'src/registry/storage' },
      { type: 'feature', pattern: 'src/registry/*', capture: ['feature'] },
    ],
    'boundaries/files': [
      { category: 'routes', pattern: '**/*-routes.ts' },
      // app.ts and server.ts, beside the feature folders.
      { category: 'composition-root', pattern: 'src/registry/*.ts' },
    ],
  },
  rules: {
    'boundaries/dependencies': ['error', {
      default: 'allow',
      checkUnknownLocals: true,
      policies: [
        {
          from: { element: { type: ['feature', 'http', 'storage'] } },
          disallow: { to: [{ element: { type: 'composition-root' } }, { file: { categories: 'composition-root' } }] },
          message: 'Only the composition root (src/registry/plugins, app.ts) assembles the registry; a feature takes what it needs as arguments.',
        },
        {
          from: { element: { type: 'feature' } },
          disallow: { to: { element: { type: 'http' } } },
          message: "Domain code knows no HTTP: only a feature's *-routes.ts files import src/registry/http.",
        },
        // ... which the next policy allows (a later policy overrides an earlier one).
        { from: { element: { type: 'feature' }, file: { categories: 'routes' } }, allow: { to: { element: { type: 'http' } } } },
        {
          from: { element: { type: 'feature' } },
          disallow: { to: { element: { type: 'feature', captured: { feature: '!{{ from.element.captured.feature }}' } }, file: { categories: 'routes' } } },
          message: "A feature never imports another feature's routes.",
        },
        {
          from: { element: { type: 'feature' } },
          disallow: { to: { element: { type: 'feature', captured: { feature: '!{{ from.captured.feature }}' }, fileInternalPath: '!index.ts' } } },
          message: "Features import each other only through the other's public index.ts.",
        },
        {
          from: { element: { type: ['http', 'storage'] } },
          disallow: { to: { element: { type: 'feature' } } },
          message: 'The platform (http/, storage/) stands below the features and imports none of them.',
        },
        {
          from: { element: { type: 'storage' } },
          disallow: { to: { element: { type: 'http' } } },
          message: 'Storage knows no HTTP.',
        },
      ],
    }],
  },
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
  // One file one idea, one function one job (issue 29): a module written as one factory closure counts as one function.
  { files: ['src/**/*.ts'], rules: { 'max-lines': ['error', { max: 400 }], 'max-lines-per-function': ['error', { max: 120, skipBlankLines: false, skipComments: false }] } },
  layer('core', '(^|/)(contract|client|registry|mesh|console|mcp|cli|service)/', 'core is shared by every part and depends on none of them.'),
  layer('contract', '(^|/)(client|registry|mesh|console|mcp|cli|service)/', "The registry's wire contract stands on core alone: server and clients both import it."),
  layer('client', '(^|/)(registry|mesh|console|mcp|cli|service)/', 'The client stands below the registry: it knows it by the contract alone.'),
  layer('registry', '(^|/)(mesh|console|mcp|cli|service)/', 'The registry depends on core, the contract, the client (to call other registries) and computer use (the browser its runs drive).'),
  layer('registry/*/storage', '(^|/)(mesh|console|mcp|cli|service)/', "A feature's storage folder holds its SQL; it depends on what the registry does.", []),
  layer('registry/storage', '(^|/)(mesh|console|mcp|cli|service)/', 'The registry depends on core, the contract, the client (to call other registries) and computer use (the browser its runs drive).', []),
  layer('mesh', '(^|/)(registry|console|mcp|cli|service)/', 'The mesh reaches the registry over HTTP (client), never its code.'),
  layer('mesh/storage', '(^|/)(registry|console|mcp|cli|service)/', 'The mesh reaches the registry over HTTP (client), never its code.', []),
  layer('mcp', '(^|/)(registry|mesh|console|cli|service)/', 'The MCP server is a registry client: the contract and the client, nothing of the registry.'),
  layer('computer-use', '(^|/)(client|registry|mesh|console|mcp|cli|service)/', "Computer use drives the console in a browser, as a person would: it knows the console by the contract alone."),
  layer('console', '(^|/)(registry|mesh|mcp|cli|service)/', 'The console is a registry client: the contract and the client, nothing of the registry or the MCP server.'),
  registryFeatures,
  // The entry points assemble the parts and may import any of them, but not the database drivers.
  { files: ['src/cli/**/*.ts', 'src/service/**/*.ts'], rules: { 'no-restricted-imports': ['error', { patterns: [nodeProtocol, sqlInStorageOnly] }] } },
  // Tests read JSON response bodies whose shape the assertions themselves check.
  { files: ['test/**/*.ts'], rules: { '@typescript-eslint/no-explicit-any': 'off' } },
);
