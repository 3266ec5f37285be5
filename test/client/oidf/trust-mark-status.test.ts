// A trust mark status answer counts only while it is fresh (issue #31). Regression: askTrustMarkStatus
// checked typ, keys, iss, trust_mark and status but never iat, so an `active` answer signed a year ago was
// accepted and anyone between a verifier and the issuer could replay it until the mark expired, hiding its
// revocation. The issuer here is a key of the test's own and a loopback server answering what it is given.
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { test, type TestContext } from 'node:test';
import { exportJWK, generateKeyPair, SignJWT } from 'jose';
import { STATUS_ANSWER_MAX_AGE_MS, askTrustMarkStatus, freshStatusAnswer } from '../../../src/client/oidf/trust-mark-status.ts';
import { TRUST_MARK_STATUS_MEDIA_TYPE, TRUST_MARK_STATUS_TYP } from '../../../src/contract/oidf-trust-marks.ts';
import { SKEW_MS, type PublishedJwk } from '../../../src/core/crypto/key-set.ts';

const ISSUER = 'https://issuer.example';
const MARK = 'eyJhbGciOiJFUzI1NiJ9.eyJpc3MiOiJodHRwczovL2lzc3Vlci5leGFtcGxlIn0.c2ln';

/** A status endpoint on loopback answering whatever `answer` holds, and the issuer key that signs. */
async function statusEndpoint(t: TestContext) {
  const { privateKey, publicKey } = await generateKeyPair('ES256');
  const key = { ...(await exportJWK(publicKey)), kid: 'k1', alg: 'ES256', use: 'sig' } as PublishedJwk;
  const endpoint = { answer: '', url: '' };
  const server = createServer((_request, response) => {
    response.writeHead(200, { 'content-type': TRUST_MARK_STATUS_MEDIA_TYPE }).end(endpoint.answer);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(() => new Promise<void>((resolve) => server.close(() => resolve())));
  endpoint.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/status`;
  const sign = (claims: Record<string, unknown>) => new SignJWT(claims).setProtectedHeader({ alg: 'ES256', typ: TRUST_MARK_STATUS_TYP, kid: 'k1' }).sign(privateKey);
  return { endpoint, key, sign };
}

test('a status answer is accepted only with a numeric iat from five minutes before now to 60 s after', async (t) => {
  const { endpoint, key, sign } = await statusEndpoint(t);
  const nowSeconds = Math.floor(Date.now() / 1000);
  const now = new Date(nowSeconds * 1000); // on a whole second, so the bounds are exact
  const ask = async (claims: Record<string, unknown>) => {
    endpoint.answer = await sign({ iss: ISSUER, trust_mark: MARK, status: 'active', ...claims });
    return askTrustMarkStatus({ endpoint: endpoint.url, issuer: ISSUER, issuerKeys: [key], trustMark: MARK }, { timeoutMs: 2000 }, now);
  };
  const maxAge = STATUS_ANSWER_MAX_AGE_MS / 1000;
  for (const iat of [nowSeconds, nowSeconds - maxAge, nowSeconds + SKEW_MS / 1000]) {
    assert.deepEqual(await ask({ iat }), { ok: true, status: 'active' }, `iat ${iat - nowSeconds} s from now`);
  }
  const refused: Array<[string, Record<string, unknown>]> = [
    ['a year old', { iat: nowSeconds - 365 * 86400 }],
    ['just past the age', { iat: nowSeconds - maxAge - 1 }],
    ['ahead by more than the skew', { iat: nowSeconds + SKEW_MS / 1000 + 1 }],
    ['no iat', {}],
    ['an iat that is a string', { iat: String(nowSeconds) }],
  ];
  for (const [why, claims] of refused) {
    const answer = await ask(claims);
    assert.equal(answer.ok, false, why);
    assert.match(answer.ok ? '' : answer.message, /is not fresh: its iat .* is not within 5 minutes before now \(60 s after\)/, why);
  }
  // The other checks still come first: a stale answer about another mark is refused for being about another mark.
  const other = await ask({ iat: nowSeconds - 365 * 86400, trust_mark: 'another.mark.jwt' });
  assert.match(other.ok ? '' : other.message, /is not https:\/\/issuer\.example's about this mark/);
});

test('freshStatusAnswer is the one rule: its bounds, and no number no answer', () => {
  const now = new Date('2026-11-28T12:00:00.000Z');
  const at = (ms: number) => (now.getTime() + ms) / 1000;
  assert.equal(freshStatusAnswer(at(0), now), true);
  assert.equal(freshStatusAnswer(at(-STATUS_ANSWER_MAX_AGE_MS), now), true);
  assert.equal(freshStatusAnswer(at(-STATUS_ANSWER_MAX_AGE_MS - 1000), now), false);
  assert.equal(freshStatusAnswer(at(SKEW_MS), now), true);
  assert.equal(freshStatusAnswer(at(SKEW_MS + 1000), now), false);
  for (const iat of [undefined, null, '1795000000', Number.NaN, Number.POSITIVE_INFINITY]) assert.equal(freshStatusAnswer(iat, now), false, String(iat));
});
