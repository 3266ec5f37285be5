import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { auditLedger } from '../../client/ledger-audit.ts';
import { createRegistryClient } from '../../client/registry-client.ts';
import type { SignedTreeHeadDocument } from '../../client/ledger-verifier.ts';
import { ConfigError } from '../../core/env-schema.ts';
import { isLoopback } from '../../core/http/loopback.ts';
import { RAW_KEY_PATTERN } from '../../contract/api-key-format.ts';
import { argumentsAfter, UsageError, type WardCommand } from '../command.ts';

const USAGE = `Usage: ward ledger verify --url <registry> [--leaf <index>]... [--state <file>] [--full]

Checks the registry's transparency ledger against its signed tree head (docs/transparency.md):
  --url    the registry's base URL (default: http://127.0.0.1:8080)
  --leaf   check that this leaf's entry, as served, is included in the signed tree (repeatable)
  --state  file holding the last tree head this command verified; the new one must extend it
           (consistency proof), and replaces it when every check passes
  --full   download every entry and recompute the root from them
Outside development the transparency routes need registry:read: the command sends the API key in
REGISTRY_API_KEY (as \`ward mcp\` does) or, in jwt mode, the access token in REGISTRY_ACCESS_TOKEN;
either goes only to an https:// or loopback --url.
Exit status: 0 all checks passed, 1 a check failed or the registry could not be read, 2 usage.

Example:
  npx ward ledger verify --url http://127.0.0.1:8080 --state ./sth.json
  REGISTRY_API_KEY=rk_… npx ward ledger verify --url https://registry.example.org --state ./sth.json`;

/** `ward ledger verify`: the client-side auditor of the transparency ledger. */
export const ledgerCommand: WardCommand = {
  name: 'ledger',
  usage: USAGE,
  async run(args) {
    const parsed = parseArgs({
      args: argumentsAfter('verify', args),
      options: {
        url: { type: 'string', default: 'http://127.0.0.1:8080' },
        leaf: { type: 'string', multiple: true, default: [] },
        state: { type: 'string' },
        full: { type: 'boolean', default: false },
      },
      strict: true,
    }).values;
    const leaves = parsed.leaf.map(Number);
    if (leaves.some((leaf) => !Number.isSafeInteger(leaf) || leaf < 0)) throw new UsageError('--leaf takes a leaf index (a non-negative integer)');
    const previous = parsed.state && existsSync(parsed.state) ? readState(parsed.state) : undefined;
    const credential = credentialFromEnvironment(process.env, parsed.url);
    const registry = createRegistryClient({ baseUrl: parsed.url, urlSetting: '--url', userAgent: 'ward-ledger', credential });
    const report = await auditLedger({ registry, leaves, previous, full: parsed.full });
    for (const check of report.checks) console.log(`${check.ok ? 'ok  ' : 'FAIL'} ${check.name}: ${check.detail}`);
    if (report.ok && parsed.state && report.treeHead) {
      writeFileSync(parsed.state, `${JSON.stringify({ tree_head: report.treeHead }, null, 2)}\n`);
    }
    return report.ok ? 0 : 1;
  },
};

/**
 * The credential the audit reads with (docs/transparency.md): an API key in `REGISTRY_API_KEY`, the
 * variable `ward mcp` reads, or an access token in `REGISTRY_ACCESS_TOKEN` (jwt mode); none against a
 * development registry. A secret is sent over https, or to this machine, only.
 */
export function credentialFromEnvironment(env: Record<string, string | undefined>, url: string): string | undefined {
  const apiKey = env.REGISTRY_API_KEY?.trim() || undefined;
  const token = env.REGISTRY_ACCESS_TOKEN?.trim() || undefined;
  if (apiKey && token) throw new ConfigError('REGISTRY_ACCESS_TOKEN', 'is set beside REGISTRY_API_KEY: set one credential, not both');
  if (apiKey && !RAW_KEY_PATTERN.test(apiKey)) throw new ConfigError('REGISTRY_API_KEY', 'is not a registry API key: expected rk_ followed by 32 to 128 letters and digits');
  const credential = apiKey ?? token;
  if (credential === undefined) return undefined;
  const target = URL.parse(url);
  if (target && target.protocol === 'http:' && !isLoopback(target.hostname)) {
    throw new UsageError(`--url must be https:// (or a loopback address) when ${apiKey ? 'REGISTRY_API_KEY' : 'REGISTRY_ACCESS_TOKEN'} is set: the credential travels in every request`);
  }
  return credential;
}

function readState(path: string): SignedTreeHeadDocument {
  const state = JSON.parse(readFileSync(path, 'utf8')) as { tree_head?: SignedTreeHeadDocument };
  if (!state.tree_head) throw new Error(`${path} holds no tree_head`);
  return state.tree_head;
}
