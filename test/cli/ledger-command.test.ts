import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test, type TestContext } from 'node:test';
import { rewriteLedgerHistory } from '../helpers/ledger-tamper.ts';
import { registerOverHttp, startRegistries, testScope } from '../helpers/listening.ts';
import { runWard } from '../helpers/ward-process.ts';
import { systemContext } from '../../src/core/call-context.ts';
import { systemClock } from '../../src/core/clock.ts';
import { AUDIENCE, ISSUER, makeSigningKey, signToken, startJwksServer, tokenClaims } from '../registry/credentials/fixtures.ts';

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

  test('against a registry that authenticates its callers: refused without a credential, audits with the key or token from the environment', async (t) => {
    // Bug pinned (issue 48, finding 5): the command had no way to pass a credential, so against a
    // registry with authentication on (the transparency routes need registry:read) it failed with 401.
    const signing = makeSigningKey('ES256');
    const jwks = await startJwksServer(t, [signing]);
    const [registry] = await startRegistries(testScope(t), 'sqlite', {
      env: { REGISTRY_AUTH_MODE: 'jwt', REGISTRY_JWT_JWKS_URI: jwks.jwksUri, REGISTRY_JWT_ISSUER: ISSUER, REGISTRY_JWT_AUDIENCE: AUDIENCE },
    });
    const url = registry!.baseUrl;
    const created = await registry!.app.ward.apiKeys.createOnce({ ctx: systemContext(systemClock) }, { org_id: 'org-monitor', display_name: 'ledger monitor', scopes: ['registry:read'] });
    const rawKey = (created.body as { raw_key: string }).raw_key;
    const now = Math.floor(Date.now() / 1000);
    const token = await signToken(signing, tokenClaims({ iat: now, exp: now + 300, scope: 'registry:read' }));

    const anonymous = await ward(t, ['ledger', 'verify', '--url', url, '--full']);
    assert.equal(anonymous.code, 1, anonymous.stdout + anonymous.stderr);
    assert.match(anonymous.stdout, /^FAIL registry: .*401 UNAUTHORIZED/m);

    const withKey = await ward(t, ['ledger', 'verify', '--url', url, '--full'], { REGISTRY_API_KEY: rawKey });
    assert.equal(withKey.code, 0, withKey.stdout + withKey.stderr);
    assert.match(withKey.stdout, /^ok {3}every leaf of 1: the entries hash to the signed root/m);

    const withToken = await ward(t, ['ledger', 'verify', '--url', url, '--leaf', '0'], { REGISTRY_ACCESS_TOKEN: token });
    assert.equal(withToken.code, 0, withToken.stdout + withToken.stderr);
    assert.match(withToken.stdout, /^ok {3}inclusion of leaf 0/m);

    const both = await ward(t, ['ledger', 'verify', '--url', url], { REGISTRY_API_KEY: rawKey, REGISTRY_ACCESS_TOKEN: token });
    assert.equal(both.code, 1);
    assert.match(both.stderr, /REGISTRY_ACCESS_TOKEN: is set beside REGISTRY_API_KEY/);
    const notAKey = await ward(t, ['ledger', 'verify', '--url', url], { REGISTRY_API_KEY: 'password' });
    assert.equal(notAKey.code, 1);
    assert.match(notAKey.stderr, /REGISTRY_API_KEY: is not a registry API key/);
    assert.doesNotMatch(notAKey.stderr + notAKey.stdout, /password/, 'the value is never repeated');
    // A secret never goes over plain HTTP to another machine.
    const cleartext = await ward(t, ['ledger', 'verify', '--url', 'http://registry.example.org'], { REGISTRY_API_KEY: rawKey });
    assert.equal(cleartext.code, 2);
    assert.match(cleartext.stderr, /--url must be https:\/\/ .*REGISTRY_API_KEY/);
  });
});
