/**
 * The registry's private signing keys at rest (issue 19, item 5): sealed under a key-encryption key
 * from the environment or a file, bound to their kid, re-sealed when the KEK rotates; without the
 * KEK the registry does not start, and says why.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { createKeySealer, keySealerFromConfig } from '../../../src/core/crypto/key-sealer.ts';
import { loadConfig } from '../../../src/core/config.ts';
import { buildRegistry } from '../../../src/registry/app.ts';
import { BACKENDS, openTestStorage, writeHeaders } from '../../helpers/registry.ts';

const kek = () => randomBytes(32).toString('base64');

async function registryOn(t: any, storage: any, env: Record<string, string>) {
  const app = await buildRegistry({ config: loadConfig({ REGISTRY_ENV: 'test', REGISTRY_HEALTH_PROBES: 'false', ...storage.env, ...env }), storage, logger: false });
  t.after(() => app.close());
  return app;
}

const storedKeys = async (storage: any) =>
  (await storage.db.selectFrom('signing_keys').select(['kid', 'private_jwk']).orderBy('created_at').execute()) as Array<{ kid: string; private_jwk: string }>;

for (const backend of BACKENDS) {
  describe(`signing keys encrypted at rest [${backend}]`, () => {
    test('with a KEK no private key is stored in clear; rotation seals the new key; signatures still verify', async (t) => {
      const storage = await openTestStorage(t, backend);
      const app = await registryOn(t, storage, { REGISTRY_KEY_ENCRYPTION_KEY: kek() });
      await app.inject({ method: 'POST', url: '/v1/trust/keys/rotate', headers: writeHeaders(), payload: {} });
      const rows = await storedKeys(storage);
      assert.equal(rows.length, 2);
      for (const row of rows) {
        assert.match(row.private_jwk, /^wardkey:v1:/);
        assert.doesNotMatch(row.private_jwk, /"d"/, 'no JWK private member in clear');
      }
      const metadata = await app.inject({ method: 'GET', url: '/v1/metadata' });
      assert.equal(metadata.statusCode, 200);
    });

    test('a KEK set later seals the existing keys; a rotated KEK re-seals them; the wrong KEK stops start-up with the reason', async (t) => {
      const storage = await openTestStorage(t, backend);
      const first = await registryOn(t, storage, {});
      const kid = first.ward.signer.kid;
      await first.close();
      assert.doesNotMatch((await storedKeys(storage))[0]!.private_jwk, /^wardkey:/, 'no KEK: stored as before');

      const one = kek();
      const sealed = await registryOn(t, storage, { REGISTRY_KEY_ENCRYPTION_KEY: one });
      assert.equal(sealed.ward.signer.kid, kid, 'the same key, now sealed');
      await sealed.close();
      const sealedValue = (await storedKeys(storage))[0]!.private_jwk;
      assert.match(sealedValue, /^wardkey:v1:/);

      const two = kek();
      const rotated = await registryOn(t, storage, { REGISTRY_KEY_ENCRYPTION_KEY: two, REGISTRY_KEY_ENCRYPTION_KEY_PREVIOUS: one });
      assert.equal(rotated.ward.signer.kid, kid);
      await rotated.close();
      assert.notEqual((await storedKeys(storage))[0]!.private_jwk.split(':')[2], sealedValue.split(':')[2], 'sealed under the new KEK');

      await assert.rejects(registryOn(t, storage, { REGISTRY_KEY_ENCRYPTION_KEY: one }), /is encrypted under key-encryption key .* not configured/);
      await assert.rejects(registryOn(t, storage, {}), /REGISTRY_KEY_ENCRYPTION_KEY/);
    });
  });
}

describe('key sealer', () => {
  test('a sealed key is bound to its kid: moved to another row it does not open', () => {
    const sealer = createKeySealer({ current: randomBytes(32) });
    const sealed = sealer.seal('{"d":"secret"}', 'kid-a');
    assert.equal(sealer.open(sealed, 'kid-a'), '{"d":"secret"}');
    assert.throws(() => sealer.open(sealed, 'kid-b'), /could not be decrypted/);
  });

  test('the KEK from a file; a KEK that is not 32 bytes names its variable', () => {
    const file = join(tmpdir(), `kek-${process.pid}-${Date.now()}`);
    writeFileSync(file, `${randomBytes(32).toString('hex')}\n`);
    assert.equal(keySealerFromConfig({ REGISTRY_KEY_ENCRYPTION_KEY_FILE: file }).sealing, true);
    assert.throws(() => loadConfig({ REGISTRY_KEY_ENCRYPTION_KEY: 'c2hvcnQ=' }), /REGISTRY_KEY_ENCRYPTION_KEY.*32 bytes/);
    assert.throws(() => loadConfig({ REGISTRY_KEY_ENCRYPTION_KEY_FILE: '/nonexistent/kek' }), /REGISTRY_KEY_ENCRYPTION_KEY_FILE.*cannot be read/);
  });
});
