import assert from 'node:assert/strict';
import { describe, it, type TestContext } from 'node:test';
import * as oauth from 'oauth4webapi';
import { AuthFailure, wwwAuthenticate } from '../../../src/registry/credentials/auth-failure.ts';
import { assertDpopBound, createDpopVerifier } from '../../../src/registry/credentials/dpop.ts';
import { createJwtVerifier } from '../../../src/registry/credentials/jwt-bearer.ts';
import { createMemoryReplayCache } from '../../../src/registry/credentials/replay-cache.ts';
import { dpopFixture } from './dpop-client.ts';
import { AUDIENCE, ISSUER, NOW, startJwksServer, startServer } from './fixtures.ts';

// The registry in dpop mode reduced to its authentication: the real client library on one side, the
// verifiers and the challenge header on the other.
describe('a resource server in dpop mode, called by oauth4webapi', () => {
  async function startResourceServer(t: TestContext) {
    const dpop = await dpopFixture(t);
    const jwks = await startJwksServer(t, [dpop.issuerKey]);
    const tokens = createJwtVerifier({
      jwksUri: jwks.jwksUri,
      issuer: ISSUER,
      audience: AUDIENCE,
      now: () => NOW,
      scheme: 'DPoP',
    });
    const proofs = createDpopVerifier({ replayCache: createMemoryReplayCache() });
    const server = await startServer(t, async (request, response) => {
      const [scheme, token = ''] = (request.headers.authorization ?? '').split(' ');
      try {
        if (scheme !== 'DPoP') throw new AuthFailure('scheme_mismatch', 'Use the DPoP scheme.', 'DPoP');
        const verified = await tokens.verify(token);
        const url = new URL(request.url ?? '/', server.baseUrl);
        const proof = request.headers.dpop;
        if (typeof proof !== 'string')
          throw new AuthFailure('invalid_request', 'One DPoP header is required.', 'DPoP');
        const { jkt } = await proofs.verify({ proof, method: request.method ?? '', url, accessToken: token });
        assertDpopBound(verified.claims, jkt);
        response.end(JSON.stringify({ subject: verified.subject }));
      } catch (error) {
        if (!(error instanceof AuthFailure)) throw error;
        response.statusCode = error.status;
        response.setHeader('www-authenticate', wwwAuthenticate(error));
        response.end(JSON.stringify({ reason: error.reason }));
      }
    });
    return { dpop, server };
  }

  async function challengeOf(request: Promise<Response>) {
    const error = await request.then(
      () => assert.fail('expected a 401 challenge'),
      (caught: unknown) => caught,
    );
    assert.ok(error instanceof oauth.WWWAuthenticateChallengeError);
    const [challenge] = error.cause;
    return challenge;
  }

  it('serves a request with a bound token and a fresh proof, and refuses the same proof replayed', async (t) => {
    const { dpop, server } = await startResourceServer(t);
    const client = await dpop.newClient();
    const handle = oauth.DPoP({}, client.keyPair);
    const url = new URL('/v1/agents?limit=2', server.baseUrl);
    const options = { DPoP: handle, [oauth.allowInsecureRequests]: true };
    const response = await oauth.protectedResourceRequest(
      client.accessToken,
      'GET',
      url,
      new Headers(),
      undefined,
      options,
    );
    assert.deepEqual(await response.json(), { subject: 'agent-client-1' });
    const sent = server.hits.at(-1)?.headers;
    const replay = await fetch(url, {
      headers: { authorization: String(sent?.authorization), dpop: String(sent?.dpop) },
    });
    assert.equal(replay.status, 401);
    assert.deepEqual(await replay.json(), { reason: 'proof_replayed' });
    assert.match(
      replay.headers.get('www-authenticate') ?? '',
      /^DPoP realm="ward", error="invalid_dpop_proof", error_description="[^"]+", algs="ES256 EdDSA RS256"$/,
    );
  });

  it('answers a token bound to another key with a DPoP invalid_token challenge the client can read', async (t) => {
    const { dpop, server } = await startResourceServer(t);
    const client = await dpop.newClient();
    const other = await dpop.newClient();
    const options = { DPoP: oauth.DPoP({}, client.keyPair), [oauth.allowInsecureRequests]: true };
    const challenge = await challengeOf(
      oauth.protectedResourceRequest(
        other.accessToken,
        'GET',
        new URL('/v1/agents', server.baseUrl),
        new Headers(),
        undefined,
        options,
      ),
    );
    assert.equal(challenge?.scheme, 'dpop');
    assert.equal(challenge?.parameters.error, 'invalid_token');
    assert.equal(challenge?.parameters.algs, 'ES256 EdDSA RS256');
  });

  it('answers a DPoP-bound token sent as Bearer with a challenge instead of serving it', async (t) => {
    const { dpop, server } = await startResourceServer(t);
    const client = await dpop.newClient();
    const challenge = await challengeOf(
      oauth.protectedResourceRequest(
        client.accessToken,
        'GET',
        new URL('/v1/agents', server.baseUrl),
        new Headers(),
        undefined,
        {
          [oauth.allowInsecureRequests]: true,
        },
      ),
    );
    assert.equal(challenge?.parameters.error, 'invalid_token');
  });
});
