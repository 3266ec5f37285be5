// DPoP proofs made by a real client library (oauth4webapi): each proof is the `DPoP` header of a
// genuine protected-resource request, captured by a loopback server.
import type { TestContext } from 'node:test';
import * as oauth from 'oauth4webapi';
import {
  makeSigningKey,
  signToken,
  startServer,
  tokenClaims,
  type LocalServer,
  type SigningKey,
} from './fixtures.ts';

export type ProofAlg = 'ES256' | 'RS256' | 'EdDSA';

/** A DPoP client: its key pair, the JWK thumbprint of its public key, and a token bound to it. */
export type DpopClient = { keyPair: oauth.CryptoKeyPair; jkt: string; accessToken: string; alg: ProofAlg };

/** What one captured request carried. */
export type CapturedProof = { proof: string; accessToken: string; method: string; url: string };

export type ProofOptions = {
  method?: string;
  /** Path and query of the request; default `/v1/agents`. */
  path?: string;
  /** Seconds added to the client's clock (oauth4webapi's clockSkew) to make stale or future proofs. */
  clockSkewSec?: number;
  /** Changes the proof header or claims just before signing (oauth4webapi's modifyAssertion). */
  modify?: (header: Record<string, unknown>, payload: Record<string, unknown>) => void;
  /** Sign with the alg oauth4webapi picks for Ed25519 keys (`Ed25519`) instead of remapping to `EdDSA`. */
  keepEd25519Alg?: boolean;
  /** Another token for the same key. */
  accessToken?: string;
};

export type DpopFixture = {
  capture: LocalServer;
  issuerKey: SigningKey;
  newClient(alg?: ProofAlg): Promise<DpopClient>;
  /** Makes a real request with `client`'s DPoP handle and returns the proof it carried. */
  proof(client: DpopClient, options?: ProofOptions): Promise<CapturedProof>;
};

export async function dpopFixture(t: Pick<TestContext, 'after'>): Promise<DpopFixture> {
  const issuerKey = makeSigningKey('ES256');
  const capture = await startServer(t, (_request, response) => {
    response.setHeader('content-type', 'application/json');
    response.end('{}');
  });
  return {
    capture,
    issuerKey,
    async newClient(alg = 'ES256') {
      const keyPair = await oauth.generateKeyPair(alg, { extractable: true });
      const jkt = await oauth.DPoP({}, keyPair).calculateThumbprint();
      const accessToken = await signToken(issuerKey, tokenClaims({ cnf: { jkt } }));
      return { keyPair, jkt, accessToken, alg };
    },
    async proof(client, options = {}) {
      // A fresh handle per proof: oauth4webapi keeps the header it built, and `modify` changes it.
      const handle = oauth.DPoP({ [oauth.clockSkew]: options.clockSkewSec ?? 0 }, client.keyPair, {
        [oauth.modifyAssertion]: (header, payload) => {
          if (client.alg === 'EdDSA' && !options.keepEd25519Alg) header.alg = 'EdDSA';
          options.modify?.(header as Record<string, unknown>, payload as Record<string, unknown>);
        },
      });
      const method = options.method ?? 'GET';
      const url = new URL(options.path ?? '/v1/agents', capture.baseUrl);
      const accessToken = options.accessToken ?? client.accessToken;
      const response = await oauth.protectedResourceRequest(
        accessToken,
        method,
        url,
        new Headers(),
        undefined,
        {
          DPoP: handle,
          [oauth.allowInsecureRequests]: true,
        },
      );
      await response.body?.cancel();
      const request = capture.hits.at(-1);
      const proof = request?.headers.dpop;
      const authorization = request?.headers.authorization ?? '';
      if (typeof proof !== 'string' || !authorization.startsWith('DPoP '))
        throw new Error('no DPoP request was captured');
      return {
        proof,
        accessToken: authorization.slice('DPoP '.length),
        method: request?.method ?? '',
        url: url.href,
      };
    },
  };
}
