/**
 * A card served through the gateway is signed by its agent, with a `jku` under the gateway's
 * `/rpc/<alias>/` (the card's own URL), which the gateway serves from the agent: the official SDK
 * verifies it there, and the registry registers the agent from the gateway's card URL.
 */
import assert from 'node:assert/strict';
import { existsSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { verifyAgentCardSignature } from '@a2a-js/sdk';
import { decodeProtectedHeader, type JWK } from 'jose';
import { buildTestRegistry, writeHeaders } from '../../helpers/registry.ts';
import { agentHealth, startTestGateway } from './gateway-helpers.ts';

/** Verifies `card`'s signature with the key `jwks` names by its kid (the official SDK's check). */
async function verifiesWith(card: any, jwks: { keys: JWK[] }): Promise<void> {
  await verifyAgentCardSignature(async (kid) => {
    const key = jwks.keys.find((candidate) => candidate.kid === kid);
    if (!key) throw new Error(`no key ${String(kid)} in the JWKS served`);
    return key;
  })(card);
}

describe('gateway: signed cards', () => {
  test("an agent's card through the gateway verifies with the key at its jku there, and registers from there", async (t) => {
    t.mock.method(console, 'debug', () => {});
    const gateway = await startTestGateway(t, { probe: { entry: 'probe' } });
    const cardUrl = `${gateway.url}/rpc/probe/.well-known/agent-card.json`;
    const card: any = await (await fetch(cardUrl)).json();
    const header = decodeProtectedHeader(card.signatures[0]);
    assert.equal(header.jku, `${gateway.url}/rpc/probe/.well-known/jwks.json`);
    await verifyAgentCardSignature(async (kid, jku) => {
      const jwks = (await (await fetch(jku as string)).json()) as { keys: JWK[] };
      return jwks.keys.find((key) => key.kid === kid) as JWK;
    })(card);
    const registry = await buildTestRegistry(t, 'sqlite', { env: { REGISTRY_CARD_SIGNATURES: 'required' } });
    const answer = await registry.call({ method: 'POST', url: '/v1/agents/from-card', headers: writeHeaders(), payload: { card_url: cardUrl, jurisdiction: 'GB' } });
    assert.equal(answer.status, 201, JSON.stringify(answer.body));
    assert.deepEqual(answer.body.endpoints.map((endpoint: any) => endpoint.url), [`${gateway.url}/rpc/probe/`]);
    assert.equal(answer.body.source.signed_by.kid, header.kid);
  });

  test('after a key rotation, a stopped agent’s remembered card and JWKS are one pair: the card verifies with the key served beside it (regression)', async (t) => {
    t.mock.method(console, 'debug', () => {});
    const gateway = await startTestGateway(t, { probe: { entry: 'probe' } });
    const base = `${gateway.url}/rpc/probe/.well-known`;
    const read = async (document: string) => {
      const response = await fetch(`${base}/${document}`);
      assert.equal(response.status, 200, document);
      return (await response.json()) as any;
    };
    // The first reads start the agent; the gateway remembers what it served.
    const firstCard = await read('agent-card.json');
    const firstJwks = await read('jwks.json');
    await verifiesWith(firstCard, firstJwks);
    const fleet = gateway.app.meshFleet;

    // Rotate: delete the agent's card-signing key and start it again (it makes a new one).
    await fleet.get('probe').stop();
    const keyFile = join(gateway.dataDir, 'mesh', 'agents', 'probe', 'card-signing-key.jwk');
    assert.ok(existsSync(keyFile), keyFile);
    rmSync(keyFile);
    await fleet.ensure('probe');
    // Only the card is read while it runs.
    const rotatedCard = await read('agent-card.json');
    assert.notEqual(decodeProtectedHeader(rotatedCard.signatures[0]).kid, decodeProtectedHeader(firstCard.signatures[0]).kid, 'a new key signs');

    // Stopped (idle), both come from the gateway's memory, and they match.
    await fleet.get('probe').stop();
    assert.equal(fleet.get('probe').url, undefined);
    const rememberedCard = await read('agent-card.json');
    const rememberedJwks = await read('jwks.json');
    assert.equal(fleet.get('probe').url, undefined, 'served from memory: the reads did not start the agent');
    assert.deepEqual(rememberedCard, rotatedCard);
    await verifiesWith(rememberedCard, rememberedJwks);
    await assert.rejects(verifiesWith(rememberedCard, firstJwks), 'the old key does not verify the new card');
    assert.equal((await agentHealth(gateway, 'probe')).state, 'stopped');
  });
});
