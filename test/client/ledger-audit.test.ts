/**
 * `auditLedger`'s consistency check from an earlier head: from a signed head document (what `ward
 * ledger verify --state` saves, re-verified against today's keys) and from a head the caller already
 * verified when it was current (`previousVerified`, what the console remembers), which still proves
 * after the key that signed it was rotated away at once, and still fails when it is not a prefix.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { auditLedger, type LedgerAuditReport } from '../../src/client/ledger-audit.ts';
import { createRegistryClient } from '../../src/client/registry-client.ts';
import { verifySignedTreeHead, type SignedTreeHeadDocument } from '../../src/client/ledger-verifier.ts';
import { BACKENDS, buildTestRegistry, registerAgent, writeHeaders, type TestRegistry } from '../helpers/registry.ts';

/** A registry client whose requests go to the app through `app.inject`. */
const clientOf = (registry: TestRegistry) =>
  createRegistryClient({
    baseUrl: 'http://registry.invalid',
    fetch: (async (input: string, init: RequestInit) => {
      const url = new URL(input);
      const response = await registry.app.inject({ method: init.method as 'GET', url: `${url.pathname}${url.search}`, headers: init.headers as Record<string, string> });
      return new Response(response.body || null, { status: response.statusCode, headers: { 'content-type': String(response.headers['content-type'] ?? '') } });
    }) as typeof fetch,
  });

const audit = (registry: TestRegistry, options: Omit<Parameters<typeof auditLedger>[0], 'registry'>) => auditLedger({ registry: clientOf(registry), ...options });

const consistencyOf = (report: LedgerAuditReport) => report.checks.find((check) => check.name.startsWith('consistency'));

for (const backend of BACKENDS) {
  describe(`auditLedger: consistency from an earlier head [${backend}]`, () => {
    test('a head verified when it was current still proves after its key was retired at once; the saved document does not', async (t) => {
      const registry = await buildTestRegistry(t, backend);
      for (let i = 0; i < 3; i += 1) await registerAgent(registry);
      const earlier = (await registry.call({ method: 'GET', url: '/v1/transparency/sth' })).body as SignedTreeHeadDocument;
      const oldKeys = (await registry.call({ method: 'GET', url: '/.well-known/jwks.json' })).body;
      const verified = await verifySignedTreeHead(earlier, oldKeys);
      assert.equal(verified.treeSize, 6);

      // An emergency rotation: the old key leaves the JWKS at once.
      const rotated = await registry.call({ method: 'POST', url: '/v1/trust/keys/rotate', headers: writeHeaders(), payload: { retire_after_seconds: 0 } });
      assert.equal(rotated.status, 201, JSON.stringify(rotated.body));
      const keys = (await registry.call({ method: 'GET', url: '/.well-known/jwks.json' })).body as { keys: Array<{ kid: string }> };
      assert.ok(!keys.keys.some((key) => key.kid === verified.kid), 'the old key is no longer published');
      await registerAgent(registry);

      // The document, re-verified against today's keys, no longer verifies (`ward ledger verify --state` keeps that check).
      const fromDocument = await audit(registry, { previous: earlier });
      assert.equal(fromDocument.ok, false);
      assert.match(consistencyOf(fromDocument)?.detail ?? '', /the earlier tree head does not verify/);

      // The size and root this client verified back then still prove the log only grew.
      const fromVerified = await audit(registry, { previousVerified: { treeSize: earlier.tree_size, rootHash: earlier.root_hash } });
      assert.deepEqual(
        fromVerified.checks.map((check) => [check.name, check.ok]),
        [
          ['signed tree head', true],
          ['consistency 6 → 9', true],
        ],
        JSON.stringify(fromVerified.checks),
      );
      assert.equal(fromVerified.ok, true);
      assert.equal(fromVerified.treeHead?.tree_size, 9);
      assert.equal(fromVerified.verified?.treeSize, 9);
      assert.equal(fromVerified.verified?.kid, rotated.body.key_id, 'the report says which key signed the current head');
      // Upper-case hex is the same hash.
      assert.equal((await audit(registry, { previousVerified: { treeSize: 6, rootHash: earlier.root_hash.toUpperCase() } })).ok, true);
      // The same size and root as now: consistent with an empty proof.
      const now = (await registry.call({ method: 'GET', url: '/v1/transparency/sth' })).body as SignedTreeHeadDocument;
      assert.equal((await audit(registry, { previousVerified: { treeSize: now.tree_size, rootHash: now.root_hash } })).ok, true);
    });

    test('a previous head the current log does not extend fails, signature or not', async (t) => {
      const registry = await buildTestRegistry(t, backend);
      for (let i = 0; i < 3; i += 1) await registerAgent(registry);
      const earlier = (await registry.call({ method: 'GET', url: '/v1/transparency/sth' })).body as SignedTreeHeadDocument;
      await registerAgent(registry);

      const madeUp = earlier.root_hash.replace(/^./, (c) => (c === '0' ? '1' : '0'));
      const rewritten = await audit(registry, { previousVerified: { treeSize: 6, rootHash: madeUp } });
      assert.equal(rewritten.ok, false);
      assert.equal(consistencyOf(rewritten)?.ok, false);
      assert.match(consistencyOf(rewritten)?.detail ?? '', /does not extend the earlier one/);

      // A head larger than the log now: history was removed.
      const larger = await audit(registry, { previousVerified: { treeSize: 20, rootHash: earlier.root_hash } });
      assert.equal(larger.ok, false);
      assert.match(consistencyOf(larger)?.detail ?? '', /smaller than it was/);

      // The same size with another root: a fork.
      const current = (await registry.call({ method: 'GET', url: '/v1/transparency/sth' })).body as SignedTreeHeadDocument;
      const fork = await audit(registry, { previousVerified: { treeSize: current.tree_size, rootHash: madeUp } });
      assert.equal(fork.ok, false);
      assert.equal(consistencyOf(fork)?.ok, false);

      // Not a head at all.
      for (const previousVerified of [
        { treeSize: 6, rootHash: 'not hex' },
        { treeSize: -1, rootHash: earlier.root_hash },
        { treeSize: 1.5, rootHash: earlier.root_hash },
      ]) {
        const malformed = await audit(registry, { previousVerified });
        assert.equal(malformed.ok, false, JSON.stringify(previousVerified));
        assert.match(consistencyOf(malformed)?.detail ?? '', /not a tree head/);
      }
    });
  });
}
