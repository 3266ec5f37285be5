import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { dirname } from 'node:path';
import { describe, test } from 'node:test';
import { exportJWK, generateKeyPair } from 'jose';
import { signBody } from '../../../../src/mesh/runtime/did/body-signature.ts';
import { createDidWebResolver, didWebFile, didWebUrl } from '../../../../src/mesh/runtime/did/did-web.ts';
import { createEchoAgent } from '../../fixtures/echo-agent.ts';
import { startTestGateway } from '../../gateway/gateway-helpers.ts';
import { CALLER, authHeaders, listenAgent, meshConfig, post, tempDir } from '../../helpers.ts';
import { eventually } from '../../../helpers/eventually.ts';

/** A did:web document for `did` in `dir` with a fresh ES256 key under #key-1 (authentication). */
async function publishDid(dir: string, did: string, options: { listed?: boolean } = {}) {
  const { privateKey, publicKey } = await generateKeyPair('ES256');
  const kid = `${did}#key-1`;
  const document = {
    id: did,
    verificationMethod: [{ id: kid, type: 'JsonWebKey2020', controller: did, publicKeyJwk: await exportJWK(publicKey) }],
    authentication: options.listed === false ? [] : ['#key-1'],
  };
  const file = didWebFile(dir, did);
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, JSON.stringify(document));
  return { sign: (body: string) => signBody(Buffer.from(body), privateKey, { alg: 'ES256', kid }) };
}

const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'echo/say', params: { text: 'signed' } });

describe('DID_VERIFY: body signatures against the sender\'s DID document', () => {
  test('did:web identifiers map to the method\'s URLs, and to the same layout in a local directory', () => {
    assert.equal(didWebUrl('did:web:example.org'), 'https://example.org/.well-known/did.json');
    assert.equal(didWebUrl('did:web:example.org%3A8443:agents:triage'), 'https://example.org:8443/agents/triage/did.json');
    assert.equal(didWebFile('/dids', 'did:web:example.org:agents:triage'), '/dids/example.org/agents/triage/did.json');
    assert.throws(() => didWebFile('/dids', 'did:web:example.org:..:..:etc'));
    assert.throws(() => didWebUrl('did:key:z6Mk'));
  });

  test('documents are kept for cacheMs, at most cacheEntries of them, the least recently used going first', async (t) => {
    const dir = tempDir(t);
    const [a, b] = ['did:web:example.org:agents:a', 'did:web:example.org:agents:b'];
    await publishDid(dir, a);
    await publishDid(dir, b);
    const keyOf = async (resolveDid: (did: string) => Promise<any>, did: string) => JSON.stringify((await resolveDid(did)).verificationMethod[0].publicKeyJwk);
    const kept = createDidWebResolver({ directory: dir, cacheEntries: 1, cacheMs: 60_000 });
    const first = await keyOf(kept, a);
    await publishDid(dir, a);
    assert.equal(await keyOf(kept, a), first, 'a document is kept');
    await keyOf(kept, b);
    assert.notEqual(await keyOf(kept, a), first, 'beyond cacheEntries the least recently used goes');
    const brief = createDidWebResolver({ directory: dir, cacheMs: 50 });
    const before = await keyOf(brief, b);
    await publishDid(dir, b);
    // Read again once cacheMs is over: the new key, however long the wait under load.
    await eventually(async () => ((await keyOf(brief, b)) !== before ? true : undefined), 'the document to be read again after cacheMs');
    const none = createDidWebResolver({ directory: dir, cacheMs: 0 });
    const now = await keyOf(none, b);
    await publishDid(dir, b);
    assert.notEqual(await keyOf(none, b), now, 'cacheMs 0 keeps nothing');
  });

  test('a did:web host on a loopback or private address is never contacted, whatever its spelling', async (t) => {
    let connections = 0;
    const server = createServer((socket) => {
      connections += 1;
      socket.destroy();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    t.after(() => new Promise<void>((resolve) => server.close(() => resolve())));
    const { port } = server.address() as AddressInfo;
    const resolveDid = createDidWebResolver({ timeoutMs: 2000 });
    for (const host of [`127.0.0.1%3A${port}`, `localhost%3A${port}`, `2130706433%3A${port}`, `%5B%3A%3Affff%3A127.0.0.1%5D%3A${port}`, '169.254.169.254', '10.0.0.1']) {
      await assert.rejects(resolveDid(`did:web:${host}`), (error: Error) => error.name === 'PrivateAddressError', host);
    }
    assert.equal(connections, 0);
    // Allowed explicitly, the same DID is fetched (the TLS handshake then fails against this server).
    await assert.rejects(createDidWebResolver({ timeoutMs: 2000, allowPrivate: true })(`did:web:127.0.0.1%3A${port}`));
    assert.equal(connections, 1);
  });

  async function agentWithDids(t: Parameters<typeof tempDir>[0]) {
    const dids = tempDir(t);
    const { url } = await listenAgent(t, createEchoAgent(), { config: meshConfig(t, { DID_VERIFY: 'true', DID_WEB_DIR: dids }) });
    return { url, dids };
  }

  test('a body signed with the key of the sender\'s DID document is accepted', async (t) => {
    const { url, dids } = await agentWithDids(t);
    const { sign } = await publishDid(dids, CALLER);
    const answer = await post(url, body, { ...(await authHeaders()), 'x-mesh-signature': await sign(body) });
    assert.equal(answer.status, 200);
    assert.equal(answer.body.result.text, 'signed');
  });

  const refusals: [string, (dids: string, elsewhere: string) => Promise<Record<string, string>>, string][] = [
    ['no signature', async () => ({}), 'missing_body_signature'],
    ['a signature over another body', async (dids) => ({ 'x-mesh-signature': await (await publishDid(dids, CALLER)).sign(body.replace('signed', 'forged')) }), 'bad_body_signature'],
    ['a signature by another DID', async (dids) => ({ 'x-mesh-signature': await (await publishDid(dids, 'did:web:localhost:agents:mallory')).sign(body) }), 'signer_mismatch'],
    ['a sender without a DID document', async (_dids, elsewhere) => ({ 'x-mesh-signature': await (await publishDid(elsewhere, CALLER)).sign(body) }), 'did_unresolvable'],
    ['a key the document does not authorise', async (dids) => ({ 'x-mesh-signature': await (await publishDid(dids, CALLER, { listed: false })).sign(body) }), 'key_not_found'],
    ['a malformed signature', async () => ({ 'x-mesh-signature': 'abc' }), 'malformed_body_signature'],
    ['a protected header that is not JSON', async () => ({ 'x-mesh-signature': `${Buffer.from('not json').toString('base64url')}..c2ln` }), 'malformed_body_signature'],
    [
      'a symmetric algorithm',
      async () => ({ 'x-mesh-signature': `${Buffer.from(JSON.stringify({ alg: 'HS256', kid: `${CALLER}#key-1` })).toString('base64url')}..c2ln` }),
      'malformed_body_signature',
    ],
  ];
  for (const [name, headers, reason] of refusals) {
    test(`${name} is refused with 401 and -32001 (${reason})`, async (t) => {
      const { url, dids } = await agentWithDids(t);
      const answer = await post(url, body, { ...(await authHeaders()), ...(await headers(dids, tempDir(t))) });
      assert.equal(answer.status, 401);
      assert.equal(answer.body.error.code, -32001);
      assert.equal(answer.body.error.data.reason, reason);
    });
  }

  test('through the gateway the signature is checked by the gateway and again by the agent', async (t) => {
    const dids = tempDir(t);
    const { sign } = await publishDid(dids, CALLER);
    const gateway = await startTestGateway(t, { probe: { entry: 'probe' } }, { env: { DID_VERIFY: 'true', DID_WEB_DIR: dids } });
    const payload = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'probe/info' });
    const unsigned = await post(`${gateway.url}/rpc/probe`, payload, await authHeaders());
    assert.equal(unsigned.status, 401);
    const signed = await post(`${gateway.url}/rpc/probe`, payload, { ...(await authHeaders()), 'x-mesh-signature': await sign(payload) });
    assert.equal(signed.status, 200, JSON.stringify(signed.body));
    assert.equal(signed.body.result.caller, CALLER);
  });
});
