import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import * as oauth from 'oauth4webapi';
import {
  AUTH_FAILURE_REASONS,
  AuthFailure,
  wwwAuthenticate,
  type AuthFailureReason,
} from '../../../src/registry/credentials/auth-failure.ts';
import { startServer } from './fixtures.ts';

describe('WWW-Authenticate challenges', () => {
  it('sends a bare Bearer challenge when no credential was presented (RFC 6750 §3.1)', () => {
    assert.equal(
      wwwAuthenticate(new AuthFailure('missing_credential', 'No credential.')),
      'Bearer realm="ward"',
    );
  });

  it('names invalid_token and describes the problem for a refused Bearer token', () => {
    const header = wwwAuthenticate(new AuthFailure('expired', 'The access token has expired.'), 'registry');
    assert.equal(
      header,
      'Bearer realm="registry", error="invalid_token", error_description="The access token has expired."',
    );
  });

  it('names invalid_dpop_proof and lists the accepted algorithms for a refused DPoP proof (RFC 9449 §7.1)', () => {
    const header = wwwAuthenticate(
      new AuthFailure('proof_replayed', 'The DPoP proof has already been used.', 'DPoP'),
    );
    assert.equal(
      header,
      'DPoP realm="ward", error="invalid_dpop_proof", error_description="The DPoP proof has already been used.", algs="ES256 EdDSA RS256"',
    );
  });

  it('keeps quotes, backslashes and line breaks out of the quoted values', () => {
    const header = wwwAuthenticate(new AuthFailure('malformed', 'bad "x"\\\r\nInjected: yes'), 'w"ard');
    assert.equal(
      header,
      'Bearer realm="w ard", error="invalid_token", error_description="bad  x    Injected: yes"',
    );
  });

  it('maps proof problems to invalid_dpop_proof, token problems to invalid_token, and outages to 503', () => {
    for (const [reason, { error, status }] of Object.entries(AUTH_FAILURE_REASONS) as Array<
      [AuthFailureReason, (typeof AUTH_FAILURE_REASONS)[AuthFailureReason]]
    >) {
      if (reason.startsWith('proof_')) assert.equal(error, 'invalid_dpop_proof', reason);
      assert.equal(status, reason === 'unavailable' ? 503 : 401, reason);
      assert.equal(new AuthFailure(reason, 'x').status, status);
    }
  });

  it('produces challenges that a real OAuth client (oauth4webapi) parses back', async (t) => {
    const failures = [
      new AuthFailure('wrong_audience', 'The access token is not meant for this registry.'),
      new AuthFailure('proof_wrong_url', 'The DPoP proof was made for another URL.', 'DPoP'),
    ];
    let next = 0;
    const server = await startServer(t, (_request, response) => {
      response.statusCode = 401;
      response.setHeader('www-authenticate', wwwAuthenticate(failures[next++] as AuthFailure));
      response.end();
    });
    for (const failure of failures) {
      const error = await oauth
        .protectedResourceRequest('token', 'GET', new URL(server.baseUrl), new Headers(), undefined, {
          [oauth.allowInsecureRequests]: true,
        })
        .then(
          () => undefined,
          (caught: unknown) => caught,
        );
      assert.ok(error instanceof oauth.WWWAuthenticateChallengeError);
      const [challenge] = error.cause;
      assert.equal(challenge?.scheme, failure.scheme.toLowerCase());
      assert.equal(challenge?.parameters.realm, 'ward');
      assert.equal(challenge?.parameters.error_description, failure.message);
    }
  });
});
