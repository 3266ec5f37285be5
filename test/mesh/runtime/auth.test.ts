import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { SignJWT, base64url, generateKeyPair } from 'jose';
import { createMeshAuthenticator, issueMeshToken } from '../../../src/mesh/runtime/auth.ts';
import { MeshRpcError } from '../../../src/mesh/runtime/mesh-errors.ts';

const SECRET = 'a-test-secret-that-is-long-enough-32b';
const SUB = 'did:web:example.org:agents:caller';
const NOW = new Date('2026-03-01T12:00:00.000Z');
const nowS = Math.floor(NOW.getTime() / 1000);
const clock = { now: () => NOW };
const authenticate = createMeshAuthenticator({ secret: SECRET, maxTtlSeconds: 3600, clock });

function hs256(claims: Record<string, unknown>, options: { secret?: string; alg?: string } = {}) {
  return new SignJWT(claims).setProtectedHeader({ alg: options.alg ?? 'HS256', typ: 'JWT' }).sign(new TextEncoder().encode(options.secret ?? SECRET));
}

const good = { sub: SUB, scope: 'mesh:invoke', iat: nowS - 10, exp: nowS + 600 };

async function reasonFor(authorization: string | undefined, agentId: string | undefined = SUB): Promise<string> {
  try {
    await authenticate({ authorization, agentId });
  } catch (error) {
    assert.ok(error instanceof MeshRpcError, String(error));
    assert.equal(error.code, -32001);
    assert.equal(error.httpStatus, 401);
    return (error.data as { reason: string }).reason;
  }
  assert.fail('authenticated unexpectedly');
}

describe('mesh authentication (contract §10)', () => {
  test('a valid HS256 token with mesh:invoke and a matching X-Agent-ID authenticates', async () => {
    const principal = await authenticate({ authorization: `Bearer ${await hs256(good)}`, agentId: SUB });
    assert.equal(principal.sub, SUB);
    assert.deepEqual(principal.scopes, ['mesh:invoke']);
    assert.equal(principal.expiresAt, good.exp);
  });

  test('scope may hold other scopes beside mesh:invoke', async () => {
    const principal = await authenticate({ authorization: `Bearer ${await hs256({ ...good, scope: 'registry:read mesh:invoke' })}`, agentId: SUB });
    assert.deepEqual(principal.scopes, ['registry:read', 'mesh:invoke']);
  });

  test('issueMeshToken mints a token the authenticator accepts', async () => {
    const token = await issueMeshToken({ secret: SECRET, sub: SUB, clock });
    assert.equal((await authenticate({ authorization: `Bearer ${token}`, agentId: SUB })).sub, SUB);
  });

  test('a missing Authorization header is refused', async () => {
    assert.equal(await reasonFor(undefined), 'missing_token');
    assert.equal(await reasonFor('Basic dXNlcjpwYXNz'), 'missing_token');
  });

  test('a token that is not a JWT is refused', async () => {
    assert.equal(await reasonFor('Bearer not-a-token'), 'malformed_token');
  });

  test('a forged token (signed with another secret) is refused', async () => {
    assert.equal(await reasonFor(`Bearer ${await hs256(good, { secret: 'another-secret-of-the-same-length!!' })}`), 'bad_signature');
  });

  test('a token whose payload was altered after signing is refused', async () => {
    const [header, , signature] = (await hs256(good)).split('.');
    const payload = base64url.encode(JSON.stringify({ ...good, sub: 'did:web:evil.example:agents:x' }));
    assert.equal(await reasonFor(`Bearer ${header}.${payload}.${signature}`, 'did:web:evil.example:agents:x'), 'bad_signature');
  });

  test('an expired token is refused', async () => {
    assert.equal(await reasonFor(`Bearer ${await hs256({ ...good, iat: nowS - 700, exp: nowS - 100 })}`), 'expired');
    assert.equal(await reasonFor(`Bearer ${await hs256({ ...good, exp: nowS })}`), 'expired');
  });

  test('a token living longer than MESH_JWT_MAX_TTL is refused even though it has not expired', async () => {
    assert.equal(await reasonFor(`Bearer ${await hs256({ ...good, iat: nowS, exp: nowS + 3601 })}`), 'lifetime_too_long');
    await authenticate({ authorization: `Bearer ${await hs256({ ...good, iat: nowS, exp: nowS + 3600 })}`, agentId: SUB });
  });

  test('a token issued in the future is refused', async () => {
    assert.equal(await reasonFor(`Bearer ${await hs256({ ...good, iat: nowS + 600, exp: nowS + 900 })}`), 'issued_in_future');
  });

  test('tokens without exp, iat or sub are refused', async () => {
    for (const claim of ['exp', 'iat', 'sub'] as const) {
      const claims: Record<string, unknown> = { ...good };
      delete claims[claim];
      assert.equal(await reasonFor(`Bearer ${await hs256(claims)}`), 'missing_claim', claim);
    }
  });

  test('alg "none" is refused', async () => {
    const header = base64url.encode(JSON.stringify({ alg: 'none', typ: 'JWT' }));
    const payload = base64url.encode(JSON.stringify(good));
    assert.equal(await reasonFor(`Bearer ${header}.${payload}.`), 'alg_not_allowed');
  });

  test('RS256 is refused, even correctly signed', async () => {
    const { privateKey } = await generateKeyPair('RS256');
    const token = await new SignJWT(good).setProtectedHeader({ alg: 'RS256' }).sign(privateKey);
    assert.equal(await reasonFor(`Bearer ${token}`), 'alg_not_allowed');
  });

  test('other HMAC algorithms with the right secret are refused (the algorithm is pinned)', async () => {
    assert.equal(await reasonFor(`Bearer ${await hs256(good, { alg: 'HS512' })}`), 'alg_not_allowed');
  });

  test('a token without mesh:invoke is refused', async () => {
    assert.equal(await reasonFor(`Bearer ${await hs256({ ...good, scope: 'registry:read' })}`), 'missing_scope');
    assert.equal(await reasonFor(`Bearer ${await hs256({ ...good, scope: undefined })}`), 'missing_scope');
    assert.equal(await reasonFor(`Bearer ${await hs256({ ...good, scope: 'mesh:invoker' })}`), 'missing_scope');
  });

  test('X-Agent-ID must be present and equal to sub', async () => {
    const token = `Bearer ${await hs256(good)}`;
    assert.equal(await reasonFor(token, 'did:web:example.org:agents:someone-else'), 'agent_id_mismatch');
    assert.equal(await reasonFor(token, ''), 'missing_agent_id');
    let reason = '';
    try {
      await authenticate({ authorization: token });
    } catch (error) {
      reason = ((error as MeshRpcError).data as { reason: string }).reason;
    }
    assert.equal(reason, 'missing_agent_id');
  });

  test('a token accepted once is refused once it has expired (verified tokens are remembered, times are not)', async () => {
    let now = NOW;
    const moving = createMeshAuthenticator({ secret: SECRET, maxTtlSeconds: 3600, clock: { now: () => now } });
    const authorization = `Bearer ${await hs256(good)}`;
    await moving({ authorization, agentId: SUB });
    now = new Date((good.exp + 1) * 1000);
    await assert.rejects(moving({ authorization, agentId: SUB }), (error: MeshRpcError) => (error.data as { reason: string }).reason === 'expired');
  });

  test('a remembered token is still checked against X-Agent-ID on every request', async () => {
    const authorization = `Bearer ${await hs256(good)}`;
    await authenticate({ authorization, agentId: SUB });
    assert.equal(await reasonFor(authorization, 'did:web:example.org:agents:impostor'), 'agent_id_mismatch');
  });

  test('the key is the configured secret: the same token fails under another secret', async () => {
    const other = createMeshAuthenticator({ secret: 'x'.repeat(40), maxTtlSeconds: 3600, clock });
    await assert.rejects(other({ authorization: `Bearer ${await hs256(good)}`, agentId: SUB }), MeshRpcError);
  });
});
