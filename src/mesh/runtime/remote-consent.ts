import { readFileSync } from 'node:fs';
import { importJWK, type JWK } from 'jose';
import type { MeshConfig } from '../mesh-config.ts';
import { DENY_ALL_CONSENT, type ConsentChecker } from './consent-requirement.ts';
import { signBody } from './did/body-signature.ts';
import { createMeshClient, type BodySigner, type MeshClient } from './mesh-client.ts';
import { MeshRpcError } from './mesh-errors.ts';

/** A checker asking the consent agent over the mesh (`consent/check`), as the calling agent. */
export function createRemoteConsentChecker(client: MeshClient): ConsentChecker {
  return {
    async isGranted(query, call) {
      let result: unknown;
      try {
        result = await client.call('consent/check', query, { traceparent: call.traceparent });
      } catch {
        // Fail closed, and say why: a consent service that cannot answer is not a denial.
        throw new MeshRpcError('AGENT_UNAVAILABLE', 'The consent service is unavailable.', { dependency: 'consent' });
      }
      return (result as { granted?: unknown } | null)?.granted === true;
    },
  };
}

/**
 * The body signer of an agent that calls others while `DID_VERIFY` is on: a private JWK in
 * `MESH_SIGNING_KEY_FILE` whose public half is in the agent's DID document under `#<kid>`.
 */
export async function loadBodySigner(config: MeshConfig, did: string): Promise<BodySigner | undefined> {
  if (config.MESH_SIGNING_KEY_FILE === undefined) return undefined;
  const jwk = JSON.parse(readFileSync(config.MESH_SIGNING_KEY_FILE, 'utf8')) as JWK;
  const alg = jwk.alg ?? (jwk.kty === 'OKP' ? 'EdDSA' : jwk.kty === 'RSA' ? 'RS256' : 'ES256');
  const key = await importJWK(jwk, alg);
  const kid = `${did}#${jwk.kid ?? 'key-1'}`;
  return (body) => signBody(body, key, { alg, kid });
}

/**
 * Where an agent's consent checks go: `MESH_CONSENT_URL`, else the consent agent behind the gateway
 * that started it (`MESH_GATEWAY_URL/rpc/consent`), else nowhere (every check is denied).
 */
export function consentCheckerFor(config: MeshConfig, did: string, signer?: BodySigner): ConsentChecker {
  const url = config.MESH_CONSENT_URL ?? (config.MESH_GATEWAY_URL ? `${config.MESH_GATEWAY_URL.replace(/\/+$/, '')}/rpc/consent` : undefined);
  if (url === undefined) return DENY_ALL_CONSENT;
  return createRemoteConsentChecker(createMeshClient({ url, secret: config.MESH_JWT_SECRET, sub: did, ...(signer ? { signer } : {}) }));
}
