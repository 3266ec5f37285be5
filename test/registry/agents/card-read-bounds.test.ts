/**
 * Security round 4, finding 3 (issue 41): one card read does not fan out without bound. At most 8
 * signatures; at most 2 key sets fetched per read, each once whatever the number of signatures naming
 * it; one deadline (REGISTRY_CARD_TIMEOUT_MS) for the whole read, redirects and key sets included; and a
 * caller that goes away ends the read at once. Hostile card servers on loopback, both backends.
 */
import assert from 'node:assert/strict';
import { request as httpRequest } from 'node:http';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { describe, test } from 'node:test';
import { signAgentCard } from '../../../src/core/crypto/agent-card-signature.ts';
import { eventually } from '../../helpers/eventually.ts';
import { startRegistry } from '../../helpers/federation.ts';
import { BACKENDS, buildTestRegistry, writeHeaders, type TestRegistry } from '../../helpers/registry.ts';
import { cardFor, cardKeyPair, startCardServer, type CardKeyPair, type CardServer } from './card-fixtures.ts';

const fromCard = (registry: TestRegistry, cardUrl: string) =>
  registry.call({ method: 'POST', url: '/v1/agents/from-card', headers: writeHeaders(), payload: { card_url: cardUrl, jurisdiction: 'GB', owner: { org_id: 'org-leeds' } } });

/** `card` signed `count` times by `key`, each signature naming its own key set on the server's origin. */
async function signedManyTimes(server: CardServer, key: CardKeyPair, count: number): Promise<Record<string, unknown>> {
  const card = cardFor(server.origin);
  const signatures = [];
  for (let i = 0; i < count; i += 1) signatures.push(await signAgentCard(card, { privateKey: key.privateKey, alg: 'ES256', kid: key.kid, jku: `${server.origin}/keys/${i}.json` }));
  return { ...card, signatures };
}

const keySetHits = (server: CardServer) => server.hits.filter((hit) => hit.url?.startsWith('/keys/') || hit.url === '/.well-known/jwks.json').length;

for (const backend of BACKENDS) {
  describe(`one card read, bounded [${backend}]`, () => {
    test('a card with 400 signatures, each naming another key set: 422 CARD_INVALID before any key set is fetched', async (t) => {
      const server = await startCardServer(t);
      const registry = await buildTestRegistry(t, backend, { env: { REGISTRY_CARD_MAX_BYTES: '1048576' } });
      const key = await cardKeyPair('k1');
      server.card = await signedManyTimes(server, key, 400);
      const answer = await fromCard(registry, server.cardUrl);
      assert.equal(answer.status, 422, JSON.stringify(answer.body));
      assert.equal(answer.body.error.code, 'CARD_INVALID');
      assert.equal(answer.body.error.details.errors[0].pointer, '/signatures');
      assert.equal(keySetHits(server), 0);
    });

    test('8 signatures naming 8 key sets that never verify: at most 2 key sets fetched, CARD_SIGNATURE_UNTRUSTED; 8 naming one key set fetch it once and verify', async (t) => {
      const server = await startCardServer(t);
      const registry = await buildTestRegistry(t, backend);
      const key = await cardKeyPair('k1');
      const stranger = await cardKeyPair('k1');
      // Every key set lists a key with the right kid but the wrong material: each signature is worth a try.
      server.routes.set('/keys/0.json', (_q, r) => void r.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ keys: [stranger.jwk] })));
      for (let i = 1; i < 8; i += 1) server.routes.set(`/keys/${i}.json`, (_q, r) => void r.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ keys: [] })));
      server.card = await signedManyTimes(server, key, 8);
      const answer = await fromCard(registry, server.cardUrl);
      assert.equal(answer.status, 422, JSON.stringify(answer.body));
      assert.ok(['CARD_SIGNATURE_UNTRUSTED', 'CARD_SIGNATURE_INVALID'].includes(answer.body.error.code), answer.body.error.code);
      assert.equal(keySetHits(server), 2, 'two key sets at most');

      const same = await startCardServer(t);
      same.keys = [key.jwk];
      const card = cardFor(same.origin);
      const one = await signAgentCard(card, { privateKey: stranger.privateKey, alg: 'ES256', kid: 'k1', jku: same.jwksUrl });
      const good = await signAgentCard(card, { privateKey: key.privateKey, alg: 'ES256', kid: 'k1', jku: same.jwksUrl });
      same.card = { ...card, signatures: [one, one, one, one, one, one, one, good] };
      const verified = await fromCard(registry, same.cardUrl);
      assert.equal(verified.status, 201, JSON.stringify(verified.body));
      assert.equal(keySetHits(same), 1, 'one key set, fetched once for eight signatures');
    });

    test('one deadline for the whole read: three redirects and the card, each slower than half the deadline, end as CARD_UNREACHABLE timeout; so does a key set that never answers', async (t) => {
      const server = await startCardServer(t);
      const registry = await buildTestRegistry(t, backend, { env: { REGISTRY_CARD_TIMEOUT_MS: '1500' } });
      const slow = (next: string) => (_q: IncomingMessage, r: ServerResponse) => void setTimeout(() => r.writeHead(302, { location: next }).end(), 800);
      server.routes.set('/a', slow('/b'));
      server.routes.set('/b', slow('/c'));
      server.routes.set('/c', slow('/.well-known/agent-card.json'));
      server.card = cardFor(server.origin);
      const answer = await fromCard(registry, `${server.origin}/a`);
      assert.equal(answer.status, 422, JSON.stringify(answer.body));
      assert.equal(answer.body.error.code, 'CARD_UNREACHABLE');
      assert.equal(answer.body.error.details.reason, 'timeout');

      const key = await cardKeyPair('k1');
      const hanging = await startCardServer(t);
      hanging.routes.set('/.well-known/jwks.json', () => undefined);
      hanging.card = { ...cardFor(hanging.origin), signatures: [await signAgentCard(cardFor(hanging.origin), { privateKey: key.privateKey, alg: 'ES256', kid: 'k1', jku: hanging.jwksUrl })] };
      const stalled = await fromCard(registry, hanging.cardUrl);
      assert.equal(stalled.status, 422, JSON.stringify(stalled.body));
      assert.equal(stalled.body.error.code, 'CARD_UNREACHABLE');
      assert.equal(stalled.body.error.details.reason, 'timeout');
      assert.equal(await registry.storage.db.selectFrom('agents').select('id').execute().then((rows) => rows.length), 0);
    });

    test('a caller that goes away ends the read: the card host sees its request dropped long before the deadline', async (t) => {
      const server = await startCardServer(t);
      // A deadline far beyond the test's: only the caller leaving can end this read.
      const registry = await startRegistry(t, backend, { REGISTRY_CARD_TIMEOUT_MS: '60000' });
      let dropped = false;
      server.routes.set('/.well-known/agent-card.json', (q) => {
        q.socket.once('close', () => (dropped = true));
      });
      const body = JSON.stringify({ card_url: server.cardUrl, jurisdiction: 'GB', owner: { org_id: 'org-leeds' } });
      const caller = httpRequest(`${registry.baseUrl}/v1/agents/from-card`, { method: 'POST', headers: { 'content-type': 'application/json', ...writeHeaders() } });
      caller.on('error', () => undefined);
      caller.end(body);
      await eventually(() => (server.hits.length > 0 ? true : undefined), 'the registry reached the card host');
      caller.destroy();
      await eventually(() => (dropped ? true : undefined), 'the registry dropped its request to the card host', 20_000);
    });
  });
}
