import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { auditLedger } from '../../client/ledger-audit.ts';
import { createRegistryClient } from '../../client/registry-client.ts';
import type { SignedTreeHeadDocument } from '../../client/ledger-verifier.ts';
import { argumentsAfter, UsageError, type WardCommand } from '../command.ts';

const USAGE = `Usage: ward ledger verify --url <registry> [--leaf <index>]... [--state <file>] [--full]

Checks the registry's transparency ledger against its signed tree head (docs/transparency.md):
  --url    the registry's base URL (default: http://127.0.0.1:8080)
  --leaf   check that this leaf's entry, as served, is included in the signed tree (repeatable)
  --state  file holding the last tree head this command verified; the new one must extend it
           (consistency proof), and replaces it when every check passes
  --full   download every entry and recompute the root from them
Exit status: 0 all checks passed, 1 a check failed or the registry could not be read, 2 usage.

Example:
  npx ward ledger verify --url http://127.0.0.1:8080 --state ./sth.json`;

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
    const registry = createRegistryClient({ baseUrl: parsed.url, urlSetting: '--url', userAgent: 'ward-ledger' });
    const report = await auditLedger({ registry, leaves, previous, full: parsed.full });
    for (const check of report.checks) console.log(`${check.ok ? 'ok  ' : 'FAIL'} ${check.name}: ${check.detail}`);
    if (report.ok && parsed.state && report.treeHead) {
      writeFileSync(parsed.state, `${JSON.stringify({ tree_head: report.treeHead }, null, 2)}\n`);
    }
    return report.ok ? 0 : 1;
  },
};

function readState(path: string): SignedTreeHeadDocument {
  const state = JSON.parse(readFileSync(path, 'utf8')) as { tree_head?: SignedTreeHeadDocument };
  if (!state.tree_head) throw new Error(`${path} holds no tree_head`);
  return state.tree_head;
}
