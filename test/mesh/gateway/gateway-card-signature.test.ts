/**
 * A card served through the gateway is signed by its agent, with a `jku` under the gateway's
 * `/rpc/<alias>/` (the card's own URL), which the gateway serves from the agent: the official SDK
 * verifies it there, and the registry registers the agent from the gateway's card URL.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { verifyAgentCardSignature } from '@a2a-js/sdk';
import { decodeProtectedHeader, type JWK } from 'jose';
import { buildTestRegistry, writeHeaders } from '../../helpers/registry.ts';
import { startTestGateway } from './gateway-helpers.ts';

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
});
