// Key rollover through OpenID Federation, the parent's side (issue #31, docs/federation.md "Key rollover
// through OpenID Federation"): serving its fetch endpoint for a child, a registry reads the child's
// entity configuration and takes new keys from it only when a key it already holds for the child
// signed it, for that registry, fresh and newer than the last one accepted. The child here is a
// plain HTTP server on loopback serving configurations the test signs with a real registry's keys,
// so each refusal can be shown; a read that does not come in time leaves the statement as it was.
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, test, type TestContext } from 'node:test';
import { decodeJwt } from 'jose';
import { ENTITY_STATEMENT_MEDIA_TYPE, ENTITY_STATEMENT_TYP } from '../../../../src/contract/openid-federation.ts';
import { signWithKid } from '../../../../src/registry/federation/oidf/superior-view.ts';
import { READ_INTERVAL_MS, createSubordinateRollover, readTimeoutMs } from '../../../../src/registry/federation/oidf/subordinate-rollover.ts';
import type { RegistryRow } from '../../../../src/registry/federation/storage/registry-store.ts';
import type { Config } from '../../../../src/core/config.ts';
import { systemClock } from '../../../../src/core/clock.ts';
import { eventually, settles } from '../../../helpers/eventually.ts';
import { refusedPort } from '../../../helpers/refused-port.ts';
import { registrationBody, startRegistry, type RunningRegistry } from '../../../helpers/federation.ts';
import { BACKENDS, writeHeaders } from '../../../helpers/registry.ts';

/**
 * Past the per-child read interval, so the next fetch reads the configuration again. The interval is
 * the parent's wall clock (subordinate-rollover.ts reads Date.now(), not the injected clock), so this
 * waits for that clock to pass it: a lower bound that load can only lengthen, never a race.
 */
const nextRead = () => {
  const readBy = Date.now() + READ_INTERVAL_MS + 100;
  return eventually(() => (Date.now() > readBy ? true : undefined), "the parent's per-child read interval to pass", 20_000, 50);
};

/** What stands at the child's address: the configuration it serves (or a hang), and how often it was read. */
async function childAddress(t: TestContext) {
  const state = { jwt: '', hang: false, reads: 0, url: '' };
  const server = createServer((request, response) => {
    if (request.url !== '/.well-known/openid-federation') return void response.writeHead(404).end();
    state.reads += 1;
    if (state.hang) return; // never answers
    response.writeHead(200, { 'content-type': ENTITY_STATEMENT_MEDIA_TYPE }).end(state.jwt);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });
  state.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return state;
}

/**
 * A parent, and a child registered at it whose address is `child.url` and whose keys are those of
 * `keys` (a real registry: its signer signs the configurations the address serves).
 */
async function parentAndChild(t: TestContext, backend: (typeof BACKENDS)[number], parentEnv: Record<string, string> = {}) {
  const parent = await startRegistry(t, backend, { REGISTRY_TIER: 'root', REGISTRY_NAME: 'root', REGISTRY_JURISDICTION: 'GB', ...parentEnv });
  const keys = await startRegistry(t, backend, { REGISTRY_TIER: 'sovereign', REGISTRY_NAME: 'nhs', REGISTRY_JURISDICTION: 'GB' });
  const child = await childAddress(t);
  const registered = await parent.call({ method: 'POST', url: '/v1/registries', headers: writeHeaders(), payload: await registrationBody(keys, 'sovereign', { api_base_url: child.url }) });
  assert.equal(registered.status, 201, JSON.stringify(registered.body));
  return { parent, keys, child };
}

/** A configuration of the child at `url` signed by `kid` of `keys`, with these claims over the usual ones. */
async function configuration(keys: RunningRegistry, url: string, kid: string, claims: Record<string, unknown> = {}) {
  const iat = Math.floor(Date.now() / 1000);
  const payload = { iss: url, sub: url, iat, exp: iat + 3600, jwks: keys.app.ward.signer.jwks(), metadata: { ward_registry: { registry_id: keys.id } }, ...claims };
  return signWithKid(keys.app.ward.signer, payload, ENTITY_STATEMENT_TYP, kid);
}

/** The kids the parent's subordinate statement about the child names, fetched now. */
async function statementKids(parent: RunningRegistry, childUrl: string): Promise<string[]> {
  const answer = await parent.app.inject({ method: 'GET', url: `/v1/oidf/fetch?sub=${encodeURIComponent(childUrl)}` });
  assert.equal(answer.statusCode, 200, answer.body);
  return ((decodeJwt(answer.body).jwks as { keys: Array<{ kid: string }> }).keys.map((key) => key.kid)).sort();
}

const rotate = async (registry: RunningRegistry) => {
  const rotated = await registry.call({ method: 'POST', url: '/v1/trust/keys/rotate', headers: writeHeaders(), payload: { retire_after_seconds: 3600 } });
  assert.equal(rotated.status, 201, JSON.stringify(rotated.body));
  return rotated.body.key_id as string;
};

for (const backend of BACKENDS) {
  describe(`key rollover through the child's entity configuration [${backend}]`, () => {
    test('a configuration signed by a held key rolls the keys over; one by an unknown key, for another registry, or older, does not', async (t) => {
      const { parent, keys, child } = await parentAndChild(t, backend);
      const k1 = keys.app.ward.signer.kid;
      const before = await configuration(keys, child.url, k1); // issued before the rotation: replayed below
      child.jwt = before;
      assert.deepEqual(await statementKids(parent, child.url), [k1]);
      await nextRead();
      const k2 = await rotate(keys);

      // Signed only by the new key, which the parent does not hold: refused.
      child.jwt = await configuration(keys, child.url, k2);
      assert.deepEqual(await statementKids(parent, child.url), [k1]);
      // Signed by a held key, but about another registry, or by another entity, or expired: refused.
      for (const claims of [
        { metadata: { ward_registry: { registry_id: 'registry://gb/registries/other' } } },
        { iss: 'http://127.0.0.1:1', sub: 'http://127.0.0.1:1' },
        { iat: Math.floor(Date.now() / 1000) - 7200, exp: Math.floor(Date.now() / 1000) - 3600 },
      ]) {
        await nextRead();
        child.jwt = await configuration(keys, child.url, k1, claims);
        assert.deepEqual(await statementKids(parent, child.url), [k1], JSON.stringify(claims));
      }

      // Signed by the key the parent holds: the statement names the new key at once.
      await nextRead();
      const accepted = await configuration(keys, child.url, k1);
      child.jwt = accepted;
      const reads = child.reads;
      assert.deepEqual(await statementKids(parent, child.url), [k1, k2].sort());
      assert.equal(child.reads, reads + 1);
      const record = (await parent.call({ method: 'GET', url: `/v1/registries/${encodeURIComponent(keys.id)}` })).body;
      assert.deepEqual(record.jwks.keys.map((key: { kid: string }) => key.kid).sort(), [k1, k2].sort());

      // Within the read interval the configuration is not read again (the fetch endpoint is public).
      child.jwt = before;
      assert.deepEqual(await statementKids(parent, child.url), [k1, k2].sort());
      assert.equal(child.reads, reads + 1, 'read at most once a second per child');
      // The configuration captured before the rotation, replayed later: older than the one accepted.
      await nextRead();
      assert.deepEqual(await statementKids(parent, child.url), [k1, k2].sort());
      assert.equal(child.reads, reads + 2);

      // OIDF's iat is in seconds: one of the same second as the last one accepted is not newer (decision 91)
      // and waits for the next read; a later one is taken, signed by the key now held.
      const k3 = await rotate(keys);
      await nextRead();
      child.jwt = await configuration(keys, child.url, k2, { iat: decodeJwt(accepted).iat });
      assert.deepEqual(await statementKids(parent, child.url), [k1, k2].sort());
      await nextRead();
      child.jwt = await configuration(keys, child.url, k2);
      assert.deepEqual(await statementKids(parent, child.url), [k1, k2, k3].sort());
    });

    test('a configuration that does not come in time, or is no statement, leaves the statement with the keys held', async (t) => {
      // The longest federation timeout (60 s): the read is capped anyway (500 ms), so a fetch never
      // waits long for a child. Were it to wait out the timeout, the safety net (20 s) would fail the test.
      const { parent, keys, child } = await parentAndChild(t, backend, { REGISTRY_FEDERATION_TIMEOUT_MS: '60000' });
      assert.equal(readTimeoutMs(60_000), 500, 'the cap');
      const k1 = keys.app.ward.signer.kid;
      await rotate(keys);
      child.hang = true;
      assert.deepEqual(await settles(statementKids(parent, child.url), 'the fetch waits for a child that never answers'), [k1]);
      assert.equal(child.reads, 1);
      // Fetches meanwhile join the read under way or come after it: none waits for another read.
      assert.deepEqual(await settles(statementKids(parent, child.url), 'a second fetch waits for the child'), [k1]);
      assert.equal(child.reads, 1, 'no second read');

      child.hang = false;
      for (const jwt of ['not a jws', 'x'.repeat(70 * 1024)]) {
        await nextRead();
        child.jwt = jwt;
        assert.deepEqual(await statementKids(parent, child.url), [k1]);
      }
    });

    test("the read leaves the fetching child's budget for the rest: a quarter of the federation timeout", async (t) => {
      // The child fetching its statement waits REGISTRY_FEDERATION_TIMEOUT_MS for the answer (the same default on both sides).
      // How long the read may take is readTimeoutMs's (a pure function, checked here); that the fetch
      // answers with the keys held while the child hangs shows the read is given up on, not waited for.
      assert.equal(readTimeoutMs(1200), 300, "a quarter of the child's 1200 ms");
      const { parent, keys, child } = await parentAndChild(t, backend, { REGISTRY_FEDERATION_TIMEOUT_MS: '1200' });
      const k1 = keys.app.ward.signer.kid;
      child.hang = true;
      assert.deepEqual(await settles(statementKids(parent, child.url), 'the fetch waits for a child that never answers'), [k1]);
      assert.equal(child.reads, 1);
    });

    test('a configuration dated ahead (inside the skew) rolls the keys without holding back the next one', async (t) => {
      const { parent, keys, child } = await parentAndChild(t, backend);
      const k1 = keys.app.ward.signer.kid;
      const k2 = await rotate(keys);
      // The child's clock runs 45 s ahead: accepted, and recorded as issued now.
      const ahead = Math.floor(Date.now() / 1000) + 45;
      child.jwt = await configuration(keys, child.url, k1, { iat: ahead, exp: ahead + 3600 });
      assert.deepEqual(await statementKids(parent, child.url), [k1, k2].sort());
      // Its clock set right, the child rotates again: that configuration, dated now, is newer than the one recorded.
      const k3 = await rotate(keys);
      await nextRead();
      child.jwt = await configuration(keys, child.url, k2);
      assert.deepEqual(await statementKids(parent, child.url), [k1, k2, k3].sort());
    });
  });
}

describe("a child's failed configuration reads in the log", () => {
  test('are logged once per interval per child, saying how many were left out', async () => {
    const LOG_EVERY_MS = 8000;
    const lines: string[] = [];
    const rollover = createSubordinateRollover({
      config: { REGISTRY_FEDERATION_TIMEOUT_MS: 2000 } as Config,
      clock: systemClock,
      fetch: globalThis.fetch,
      storage: undefined as never, // never reached: nothing is read
      log: (message) => lines.push(message),
      logEveryMs: LOG_EVERY_MS,
    });
    const row = { id: 'registry://gb/registries/gone', api_base_url: `http://127.0.0.1:${await refusedPort()}` } as RegistryRow;
    // Both intervals are the wall clock's (subordinate-rollover.ts): the second and third reads come a
    // read interval apart, well inside the log interval (its 8 s leave a busy machine room); the fourth
    // once the log interval since the first line has passed, which the test waits for.
    assert.equal(await rollover(row), row, 'a failed read leaves the row as it was');
    const firstLogged = Date.now(); // the first line was logged by now
    for (let read = 1; read < 3; read += 1) {
      await nextRead();
      assert.equal(await rollover(row), row);
    }
    assert.equal(lines.length, 1, lines.join('\n'));
    await eventually(() => (Date.now() > firstLogged + LOG_EVERY_MS ? true : undefined), 'the log interval to pass', 20_000, 50);
    assert.equal(await rollover(row), row);
    assert.equal(lines.length, 2, lines.join('\n'));
    assert.match(lines[0] as string, /registry:\/\/gb\/registries\/gone could not be read/);
    assert.match(lines[1] as string, /\(2 more failure\(s\) of this child not logged since the last line\)/);
  });
});
