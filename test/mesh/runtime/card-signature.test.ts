import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { describe, test } from 'node:test';
import { canonicalizeAgentCard, verifyAgentCardSignature } from '@a2a-js/sdk';
import { base64url, decodeProtectedHeader, flattenedVerify, generateKeyPair, importJWK, type JWK } from 'jose';
import { canonicalAgentCardPayload } from '../../../src/core/crypto/agent-card-canonical.ts';
import { verifyAgentCard, type CardSignatureError } from '../../../src/core/crypto/agent-card-signature.ts';
import { CARD_KEY_FILE, cardKeyFromJwk, loadCardKey, newCardKeyJwk } from '../../../src/mesh/runtime/card-signing.ts';
import { createEchoAgent } from '../fixtures/echo-agent.ts';
import { listenAgent, meshConfig, rpc } from '../helpers.ts';
import { eventually } from '../../helpers/eventually.ts';

/** The key a card's signature names, fetched from its `jku` (which must be on the card's origin). */
async function keyFromJku(cardOrigin: string, kid: string, jku?: string): Promise<JWK> {
  assert.ok(jku, 'the signature names a jku');
  assert.equal(new URL(jku).origin, cardOrigin, 'the jku is on the card origin');
  const jwks = (await (await fetch(jku)).json()) as { keys: JWK[] };
  const key = jwks.keys.find((candidate) => candidate.kid === kid);
  assert.ok(key, `the JWKS at ${jku} has ${kid}`);
  return key;
}

const cardAt = async (url: string, version?: string): Promise<any> =>
  (await fetch(`${url}.well-known/agent-card.json`, { headers: version ? { 'a2a-version': version } : {} })).json();

describe('signed agent cards', () => {
  test('every card a Ward agent serves (1.0 and 0.3 shapes) verifies with the official SDK and with jose alone; a tampered one does not', async (t) => {
    t.mock.method(console, 'debug', () => {}); // the SDK logs each signature that fails
    const { url } = await listenAgent(t, createEchoAgent());
    const origin = new URL(url).origin;
    const sdkVerify = verifyAgentCardSignature((kid, jku) => keyFromJku(origin, kid, jku));
    for (const version of [undefined, '1.0', '0.3']) {
      const card = await cardAt(url, version);
      assert.equal(card.signatures.length, 1, `one signature (${version})`);
      const header = decodeProtectedHeader(card.signatures[0]);
      assert.equal(header.alg, 'ES256');
      assert.equal(header.typ, 'JOSE');
      assert.equal(header.jku, `${url}.well-known/jwks.json`);
      await sdkVerify(card);
      // Independently: the SDK's canonical form, the JWS detached over it, verified by jose.
      const key = await importJWK(await keyFromJku(origin, header.kid as string, header.jku), 'ES256');
      const payload = base64url.encode(canonicalizeAgentCard(card));
      await flattenedVerify({ ...card.signatures[0], payload }, key);
      // Ward's own verifier agrees.
      assert.equal((await verifyAgentCard(card, async (h) => keyFromJku(origin, h.kid, h.jku))).kid, header.kid);

      for (const tamper of [
        (c: any) => (c.skills[0].description = `${c.skills[0].description} (and more)`),
        (c: any) => (c.supportedInterfaces[0].url = 'https://elsewhere.example.org/'),
        (c: any) => (c.capabilities.streaming = false),
        (c: any) => (c.name = `${c.name}!`),
      ]) {
        const changed = structuredClone(card);
        tamper(changed);
        await assert.rejects(sdkVerify(changed), /No valid signatures/);
        await assert.rejects(flattenedVerify({ ...changed.signatures[0], payload: base64url.encode(canonicalizeAgentCard(changed)) }, key));
        await assert.rejects(verifyAgentCard(changed, async (h) => keyFromJku(origin, h.kid, h.jku)), (error: CardSignatureError) => error.failure === 'invalid');
      }
    }
  });

  test('the extended card (GetExtendedAgentCard, authenticated) is signed too and verifies with the SDK', async (t) => {
    t.mock.method(console, 'debug', () => {});
    const { url } = await listenAgent(t, createEchoAgent());
    const origin = new URL(url).origin;
    // As JSON, the form a card travels in. The SDK client's own getAgentCard(…, verifier) passes its
    // internal (oneof `$case`) form and so drops securitySchemes from the payload: a2aproject/a2a-js#663.
    const card = (await rpc(url, 'GetExtendedAgentCard', {})).result;
    assert.equal(card.signatures.length, 1);
    await verifyAgentCardSignature((kid, jku) => keyFromJku(origin, kid, jku))(card);
    const stranger = verifyAgentCardSignature(async () => (await generateKeyPair('ES256')).publicKey);
    await assert.rejects(stranger(card), /No valid signatures/);
  });

  test("the agent's key stays across restarts on one data directory and changes when its file is removed", async (t) => {
    const config = meshConfig(t);
    const kidOf = async () => {
      const agent = await listenAgent(t, createEchoAgent(), { config });
      const kid = decodeProtectedHeader((await cardAt(agent.url)).signatures[0]).kid;
      await agent.app.close();
      return kid;
    };
    const first = await kidOf();
    assert.equal(await kidOf(), first);
    rmSync(join(config.MESH_DATA_DIR, 'agents', 'echo', CARD_KEY_FILE));
    assert.notEqual(await kidOf(), first);
  });
});

describe("the agent's card key file", () => {
  const signing = new URL('../../../src/mesh/runtime/card-signing.ts', import.meta.url).href;
  /**
   * One process creating the key in `dir` once `go` exists (so they all start together); prints its kid.
   * It says it is ready, waiting for `go`, with a file of its own in `ready`.
   */
  const creator = (dir: string, go: string, ready: string) =>
    new Promise<string>((resolve, reject) => {
      const script = `import { existsSync, writeFileSync } from 'node:fs';
const { loadCardKey } = await import(${JSON.stringify(signing)});
writeFileSync(${JSON.stringify(ready)} + '/' + process.pid, '');
while (!existsSync(${JSON.stringify(go)})) await new Promise((r) => setTimeout(r, 1));
const key = await loadCardKey(${JSON.stringify(dir)});
process.stdout.write(key.publicJwk.kid);`;
      execFile(process.execPath, ['--input-type=module', '-e', script], (error, stdout, stderr) => (error ? reject(new Error(stderr || error.message)) : resolve(stdout)));
    });

  test('processes creating it at once all end up with the one key written, whole, mode 0600, no temporary file left', async (t) => {
    const dir = mkdtempSync(join(tmpdir(), 'ward-card-key-'));
    t.after(() => rmSync(dir, { recursive: true, force: true }));
    const go = join(dir, 'go');
    const ready = mkdtempSync(join(tmpdir(), 'ward-card-key-ready-'));
    t.after(() => rmSync(ready, { recursive: true, force: true }));
    const running = Array.from({ length: 4 }, () => creator(dir, go, ready));
    await eventually(() => (readdirSync(ready).length === 4 ? true : undefined), 'the four creators to wait for go', 60_000);
    writeFileSync(go, '');
    const kids = await Promise.all([...running, loadCardKey(dir).then((key) => key.publicJwk.kid), loadCardKey(dir).then((key) => key.publicJwk.kid)]);
    const file = join(dir, CARD_KEY_FILE);
    const onDisk = await cardKeyFromJwk(JSON.parse(readFileSync(file, 'utf8')) as JWK);
    assert.deepEqual(new Set(kids), new Set([onDisk.publicJwk.kid]), 'every creator uses the key on disk');
    assert.equal(statSync(file).mode & 0o777, 0o600);
    assert.deepEqual(readdirSync(dir).sort(), [CARD_KEY_FILE, 'go'].sort(), 'no temporary file left');
  });

  test('a file that does not hold a key is read again for a moment, then refused with its name; it is never replaced', async (t) => {
    const dir = mkdtempSync(join(tmpdir(), 'ward-card-key-'));
    t.after(() => rmSync(dir, { recursive: true, force: true }));
    const file = join(dir, CARD_KEY_FILE);
    // A key being written by a writer of the old kind: empty, then whole.
    const whole = JSON.stringify(await newCardKeyJwk());
    writeFileSync(file, '');
    // The writer of the old kind, simulated: it fills the file 60 ms on, between the reader's retries
    // (50 ms apart, ten of them, on the same event loop, so load delays both alike). Its timing is the
    // scenario, not a wait for background work.
    const filling = delay(60).then(() => writeFileSync(file, whole));
    const key = await loadCardKey(dir);
    await filling;
    assert.equal(key.publicJwk.kid, (await cardKeyFromJwk(JSON.parse(whole) as JWK)).publicJwk.kid, 'the key once written whole');
    // Truncated for good (a crash of that writer): a clear error naming the file, the file kept.
    const truncated = whole.slice(0, 40);
    writeFileSync(file, truncated);
    await assert.rejects(loadCardKey(dir), (error: Error) => error.message.includes(file) && /does not hold a card signing key/.test(error.message));
    assert.equal(readFileSync(file, 'utf8'), truncated);
  });
});

describe('canonical card payload', () => {
  const base = { name: 'x', description: 'd', version: '1', capabilities: {}, skills: [] };
  const cards: Array<Record<string, unknown>> = [
    base,
    {
      ...base,
      description: '',
      supportedInterfaces: [{ url: 'http://a/', protocolBinding: 'JSONRPC', protocolVersion: '1.0', tenant: '' }],
      capabilities: { streaming: false, extensions: [{ uri: 'u', required: false, params: { a: 1, b: '', c: { d: [] } } }], pushNotifications: true, other: 1 },
      skills: [{ id: 'a', name: 'A', description: 'd', tags: [], examples: [], security_requirements: [{ schemes: { k: { list: ['r'] } } }] }],
      defaultInputModes: [],
      defaultOutputModes: ['text/plain'],
      url: 'http://not-covered.example/',
      methods: ['a'],
      securitySchemes: {
        bearer: { httpAuthSecurityScheme: { scheme: 'Bearer', bearerFormat: 'JWT', description: '' } },
        old: { type: 'http', scheme: 'bearer' },
        oauth: { oauth2SecurityScheme: { flows: { authorizationCode: { authorizationUrl: 'a', tokenUrl: 't', scopes: { s: 'S' }, pkceRequired: true } } } },
      },
      securityRequirements: [{ schemes: { bearer: { list: [] } } }, { schemes: { oauth: { list: ['s'] } } }],
      provider: { url: '', organization: 'o' },
      iconUrl: '',
      documentation_url: 'https://docs.example/',
      signatures: [{ protected: 'a', signature: 'b' }],
    },
  ];
  test('is the official SDK canonical form, key for key', () => {
    for (const card of cards) assert.equal(canonicalAgentCardPayload(card), canonicalizeAgentCard(card as never));
  });
  test('is A2A 1.0 §8.4.1 example output for its example card', () => {
    const example = { name: 'Example Agent', description: '', capabilities: { streaming: false, pushNotifications: false, extensions: [] }, skills: [] };
    // The specification keeps `description: ""` and `skills: []` (REQUIRED); the SDK, and so Ward, drops them.
    assert.equal(canonicalAgentCardPayload(example), '{"capabilities":{"pushNotifications":false,"streaming":false},"name":"Example Agent"}');
  });
});
