import assert from 'node:assert/strict';
import { once } from 'node:events';
import { writeFileSync } from 'node:fs';
import { request } from 'node:https';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it, type TestContext } from 'node:test';
import type { TLSSocket } from 'node:tls';
import Fastify from 'fastify';
import { AuthFailure, wwwAuthenticate } from '../../../src/registry/credentials/auth-failure.ts';
import { createJwtVerifier } from '../../../src/registry/credentials/jwt-bearer.ts';
import {
  assertCertificateBound,
  certificateThumbprint,
  tlsServerOptions,
  watchCrl,
} from '../../../src/registry/credentials/mtls.ts';
import { eventually } from '../../helpers/eventually.ts';
import {
  AUDIENCE,
  ISSUER,
  NOW,
  makeSigningKey,
  signToken,
  startJwksServer,
  tokenClaims,
} from './fixtures.ts';
import { makePki, type Pki } from './pki.ts';

let pki: Pki;
before(() => {
  pki = makePki();
});
after(() => pki.remove());

type Answer = { status: number; wwwAuthenticate: string | undefined; body: any };

/** One HTTPS request presenting `clientName`'s certificate (or none), trusting the test CA. */
function call(port: number, clientName: string | undefined, token?: string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port,
        path: '/v1/whoami',
        ca: pki.pem('ca'),
        ...(clientName ? { cert: pki.pem(clientName), key: pki.key(clientName) } : {}),
        headers: token ? { authorization: `Bearer ${token}` } : {},
        agent: false,
      },
      (response) => {
        let text = '';
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => (text += chunk));
        response.on('end', () => {
          const challenge = response.headers['www-authenticate'];
          resolve({ status: response.statusCode ?? 0, wwwAuthenticate: challenge, body: JSON.parse(text) });
        });
      },
    );
    req.on('error', reject);
    req.end();
  });
}

// The registry in mtls mode reduced to one route: TLS has checked the chain at the handshake; the
// route verifies the token and its binding to this connection's certificate.
async function startMtlsServer(t: TestContext) {
  const issuerKey = makeSigningKey('ES256');
  const jwks = await startJwksServer(t, [issuerKey]);
  const verifier = createJwtVerifier({
    jwksUri: jwks.jwksUri,
    issuer: ISSUER,
    audience: AUDIENCE,
    now: () => NOW,
  });
  const files = {
    certFile: pki.path('server.pem'),
    keyFile: pki.path('server.key'),
    caFile: pki.path('ca.pem'),
  };
  const app = Fastify({ https: tlsServerOptions(files) });
  let handled = 0;
  app.get('/v1/whoami', async (req, reply) => {
    handled += 1;
    const der = (req.raw.socket as TLSSocket).getPeerCertificate().raw;
    try {
      const verified = await verifier.verify((req.headers.authorization ?? '').replace(/^Bearer /, ''));
      assertCertificateBound(verified.claims, der);
      return { subject: verified.subject, thumbprint: certificateThumbprint(der) };
    } catch (error) {
      if (!(error instanceof AuthFailure)) throw error;
      return reply
        .code(error.status)
        .header('www-authenticate', wwwAuthenticate(error))
        .send({ reason: error.reason });
    }
  });
  await app.listen({ port: 0, host: '127.0.0.1' });
  t.after(() => app.close());
  const port = (app.server.address() as AddressInfo).port;
  const tokenFor = (clientName: string | undefined) =>
    signToken(
      issuerKey,
      tokenClaims(clientName ? { cnf: { 'x5t#S256': pki.opensslThumbprint(clientName) } } : {}),
    );
  return { app, port, tokenFor, handled: () => handled };
}

describe('mTLS at the handshake', () => {
  for (const [what, clientName] of [
    ['no client certificate', undefined],
    ['a self-signed certificate with the right subject', 'rogue'],
    ['an expired certificate from the CA', 'expired-client'],
  ] as const) {
    it(`fails the handshake for ${what} and never reaches a route`, async (t) => {
      const server = await startMtlsServer(t);
      let secured = 0;
      server.app.server.on('secureConnection', () => (secured += 1));
      const tlsError = once(server.app.server, 'tlsClientError');
      await assert.rejects(call(server.port, clientName, await server.tokenFor('client')));
      // OpenSSL itself refuses a missing certificate; Node checks the chain once the handshake is
      // done and destroys the socket, so the client sees a reset. Either way no connection is secured.
      await tlsError;
      assert.equal(secured, 0);
      assert.equal(server.handled(), 0);
    });
  }

  it('hands the route the DER of a CA-issued client certificate, whose thumbprint matches openssl', async (t) => {
    const server = await startMtlsServer(t);
    const answer = await call(server.port, 'client', await server.tokenFor('client'));
    assert.equal(answer.status, 200);
    assert.equal(answer.body.subject, 'agent-client-1');
    assert.equal(answer.body.thumbprint, pki.opensslThumbprint('client'));
    assert.equal(certificateThumbprint(pki.der('client')), pki.opensslThumbprint('client'));
  });
});

describe('certificate revocation (REGISTRY_MTLS_CRL_FILE)', () => {
  it('a certificate the CA revoked fails the handshake; the CRL file is re-read when it changes; a bad file stops start-up', async (t) => {
    const files = { certFile: pki.path('server.pem'), keyFile: pki.path('server.key'), caFile: pki.path('ca.pem') };
    // A CRL revoking only a certificate nobody uses here: the others from the CA get in.
    const crlFile = pki.revoke('expired-client');
    const app = Fastify({ https: tlsServerOptions({ ...files, crlFile }) });
    app.get('/v1/whoami', async () => ({ ok: true }));
    await app.listen({ port: 0, host: '127.0.0.1' });
    t.after(() => app.close());
    const port = (app.server.address() as AddressInfo).port;
    assert.equal((await call(port, 'other-client')).status, 200);

    const reloaded: string[] = [];
    const stop = watchCrl(app.server as never, { ...files, crlFile }, (message) => reloaded.push(message), 50);
    t.after(stop);
    pki.revoke('other-client');
    await eventually(async () => (reloaded.includes('certificate revocation list reloaded') ? true : undefined), 'the CRL reload');
    await assert.rejects(call(port, 'other-client'), 'revoked: the handshake fails');
    assert.equal((await call(port, 'client')).status, 200, 'a certificate not revoked still gets in');

    // A CRL file that is spoiled while the server runs: logged, and the list in force stays.
    writeFileSync(crlFile, 'not a CRL any more');
    await eventually(async () => (reloaded.some((message) => message.startsWith('certificate revocation list not reloaded')) ? true : undefined), 'the refused reload');
    await assert.rejects(call(port, 'other-client'), 'still revoked');
    assert.equal((await call(port, 'client')).status, 200);

    const bad = pki.path('not-a-crl.pem');
    writeFileSync(bad, 'not a CRL');
    assert.throws(() => tlsServerOptions({ ...files, crlFile: bad }), /does not hold a PEM X509 CRL/);
  });
});

describe('certificate-bound tokens (RFC 8705)', () => {
  it('refuses a token bound to another certificate of the same CA with 401 invalid_token', async (t) => {
    const server = await startMtlsServer(t);
    const answer = await call(server.port, 'client', await server.tokenFor('other-client'));
    assert.equal(answer.status, 401);
    assert.equal(answer.body.reason, 'binding_mismatch');
    assert.match(
      answer.wwwAuthenticate ?? '',
      /^Bearer realm="ward", error="invalid_token", error_description="[^"]+"$/,
    );
  });

  it('refuses a token with no certificate binding over a valid mTLS connection', async (t) => {
    const server = await startMtlsServer(t);
    const answer = await call(server.port, 'client', await server.tokenFor(undefined));
    assert.equal(answer.status, 401);
    assert.equal(answer.body.reason, 'binding_mismatch');
  });

  it('refuses when no certificate is known for the connection', () => {
    assert.throws(
      () => assertCertificateBound({ cnf: { 'x5t#S256': pki.opensslThumbprint('client') } }, undefined),
      (error: unknown) => error instanceof AuthFailure && error.reason === 'binding_mismatch',
    );
  });
});

describe('TLS server options', () => {
  it('demand a chained client certificate and TLS 1.2 or later when a CA file is given', () => {
    const options = tlsServerOptions({
      certFile: pki.path('server.pem'),
      keyFile: pki.path('server.key'),
      caFile: pki.path('ca.pem'),
    });
    assert.equal(options.requestCert, true);
    assert.equal(options.rejectUnauthorized, true);
    assert.equal(options.minVersion, 'TLSv1.2');
    assert.deepEqual(options.ca, pki.pem('ca'));
  });

  it('serve TLS without client certificates when no CA file is given', () => {
    const options = tlsServerOptions({ certFile: pki.path('server.pem'), keyFile: pki.path('server.key') });
    assert.equal(options.requestCert, false);
    assert.equal(options.ca, undefined);
  });

  it('name the file that cannot be read', () => {
    const missing = pki.path('nowhere.pem');
    assert.throws(
      () =>
        tlsServerOptions({
          certFile: pki.path('server.pem'),
          keyFile: pki.path('server.key'),
          caFile: missing,
        }),
      (error: Error) => error.message.includes(missing) && error.message.includes('ENOENT'),
    );
  });

  it('name a file that holds no PEM certificate, and a key that does not belong to the certificate', () => {
    const junk = pki.path('junk.pem');
    writeFileSync(junk, 'not a certificate');
    assert.throws(
      () => tlsServerOptions({ certFile: junk, keyFile: pki.path('server.key') }),
      (error: Error) => error.message.includes(junk),
    );
    assert.throws(
      () => tlsServerOptions({ certFile: pki.path('server.pem'), keyFile: pki.path('client.key') }),
      /does not belong/,
    );
  });
});
