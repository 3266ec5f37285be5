import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test, type TestContext } from 'node:test';
import { rewriteLedgerHistory } from '../helpers/ledger-tamper.ts';
import { registerOverHttp, startRegistries, testScope } from '../helpers/listening.ts';
import { runWard } from '../helpers/ward-process.ts';

const ward = runWard;

function stateFile(t: TestContext): string {
  const dir = mkdtempSync(join(tmpdir(), 'ward-ledger-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return join(dir, 'sth.json');
}

async function registryWithAgents(t: TestContext, count: number) {
  const [registry] = await startRegistries(testScope(t), 'sqlite');
  for (let i = 0; i < count; i += 1) await registerOverHttp(registry!.baseUrl, `Ledgered ${i}`);
  return registry!;
}

describe('ward ledger verify', () => {
  test('passes against an honest registry: signed head, chosen leaves and the whole tree, and saves the head', async (t) => {
    const registry = await registryWithAgents(t, 3);
    const state = stateFile(t);
    const result = await ward(t, ['ledger', 'verify', '--url', registry.baseUrl, '--leaf', '0', '--leaf', '5', '--full', '--state', state]);
    assert.equal(result.code, 0, result.stdout + result.stderr);
    assert.match(result.stdout, /^ok {3}signed tree head: size 6, root [0-9a-f]{64}/m);
    assert.match(result.stdout, /^ok {3}inclusion of leaf 0: seq 1/m);
    assert.match(result.stdout, /^ok {3}inclusion of leaf 5: seq 6/m);
    assert.match(result.stdout, /^ok {3}every leaf of 6/m);
    assert.equal(JSON.parse(readFileSync(state, 'utf8')).tree_head.tree_size, 6);

    await registerOverHttp(registry.baseUrl, 'Later');
    const again = await ward(t, ['ledger', 'verify', '--url', registry.baseUrl, '--state', state]);
    assert.equal(again.code, 0, again.stdout + again.stderr);
    assert.match(again.stdout, /^ok {3}consistency 6 → 8: the current log extends the earlier one/m);
    assert.equal(JSON.parse(readFileSync(state, 'utf8')).tree_head.tree_size, 8);
  });

  test('an entry altered in the database is detected by its inclusion proof and by the full check', async (t) => {
    const registry = await registryWithAgents(t, 2);
    await registry.storage.db
      .updateTable('ledger_leaves')
      .set((eb) => ({ entry: eb.fn('replace', [eb.ref('entry'), eb.val('"level":0'), eb.val('"level":3')]) }))
      .where('leaf_index', '=', 1)
      .execute();
    const result = await ward(t, ['ledger', 'verify', '--url', registry.baseUrl, '--leaf', '0', '--leaf', '1', '--full']);
    assert.equal(result.code, 1, result.stdout + result.stderr);
    assert.match(result.stdout, /^ok {3}inclusion of leaf 0/m);
    assert.match(result.stdout, /^FAIL inclusion of leaf 1: .*altered/m);
    assert.match(result.stdout, /^FAIL every leaf of 4/m);
  });

  test('a rewritten history with re-signed heads is detected against the head saved earlier, which is kept', async (t) => {
    const registry = await registryWithAgents(t, 2);
    const state = stateFile(t);
    assert.equal((await ward(t, ['ledger', 'verify', '--url', registry.baseUrl, '--state', state])).code, 0);
    const saved = readFileSync(state, 'utf8');
    await registerOverHttp(registry.baseUrl, 'After the save');
    await rewriteLedgerHistory(registry.storage);

    // On its own the forged log is self-consistent: only the earlier head exposes it.
    const alone = await ward(t, ['ledger', 'verify', '--url', registry.baseUrl, '--leaf', '0', '--full']);
    assert.equal(alone.code, 0, alone.stdout);
    const result = await ward(t, ['ledger', 'verify', '--url', registry.baseUrl, '--state', state]);
    assert.equal(result.code, 1, result.stdout + result.stderr);
    assert.match(result.stdout, /^FAIL consistency 4 → 6: .*rewritten/m);
    assert.equal(readFileSync(state, 'utf8'), saved, 'a failed run does not replace the trusted head');
  });

  test('usage mistakes exit 2 and an unreachable registry exits 1', async (t) => {
    for (const args of [['ledger'], ['ledger', 'audit'], ['ledger', 'verify', '--leaf', 'one'], ['ledger', 'verify', '--colour']]) {
      const result = await ward(t, args);
      assert.equal(result.code, 2, args.join(' '));
      assert.match(result.stderr, /Usage: ward ledger verify/);
    }
    const unreachable = await ward(t, ['ledger', 'verify', '--url', 'http://127.0.0.1:9']);
    assert.equal(unreachable.code, 1);
    assert.match(unreachable.stdout, /^FAIL registry: /m);
  });
});
