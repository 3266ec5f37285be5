import assert from 'node:assert/strict';
import { appendLeaves, hashLeaf, toHex } from '../../src/core/crypto/merkle.ts';
import type { Storage } from '../../src/registry/storage/database.ts';

/**
 * What an attacker with database access would do: change leaf 0's entry and rebuild every hash to
 * match, so the stored tree is self-consistent and only a head verified earlier can catch it.
 */
export async function rewriteLedgerHistory(storage: Storage): Promise<void> {
  const leaves = await storage.db.selectFrom('ledger_leaves').selectAll().orderBy('leaf_index').execute();
  const forged = leaves.map((leaf, i) => (i === 0 ? leaf.entry.replace('"version":1', '"version":7') : leaf.entry));
  assert.notEqual(forged[0], leaves[0]?.entry);
  const hashes = forged.map((entry) => hashLeaf(new TextEncoder().encode(entry)));
  await storage.db.transaction().execute(async (tx) => {
    for (const [i, entry] of forged.entries()) {
      await tx.updateTable('ledger_leaves').set({ entry, leaf_hash: toHex(hashes[i] as Uint8Array) }).where('leaf_index', '=', i).execute();
    }
    await tx.deleteFrom('ledger_nodes').execute();
    const nodes = appendLeaves([], 0, hashes).created.map((n) => ({ level: n.level, node_index: n.index, hash: toHex(n.hash) }));
    await tx.insertInto('ledger_nodes').values(nodes).execute();
  });
}
