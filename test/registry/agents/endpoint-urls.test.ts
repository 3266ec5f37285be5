/**
 * Bug pinned (issue 48, finding 3): endpoint URLs of any scheme registered (201, production) and came
 * back as `selected.url` in signed routing advice: `javascript:alert(1)//`, `file:///etc/passwd`,
 * `vbscript:`, `mailto:`, `urn:`, and `http://127.0.0.1:22/`. An endpoint's URL now takes the schemes
 * its protocol allows (https, http outside production; mllp or tcp for hl7v2-mllp), with no private
 * address in production unless REGISTRY_ALLOW_PRIVATE_ENDPOINTS; 422 VALIDATION_ERROR with a pointer.
 */
import assert from 'node:assert/strict';
import { describe, test, type TestContext } from 'node:test';
import type { Backend } from '../../../src/registry/storage/database.ts';
import { agentBody, BACKENDS, buildTestRegistry, registerAgent, ulidOf, writeHeaders } from '../../helpers/registry.ts';
import { makeSigningKey, productionJwtEnv, signToken, startJwksServer, tokenClaims } from '../credentials/fixtures.ts';

async function productionRegistry(t: TestContext, backend: Backend, extra: Record<string, string> = {}) {
  const key = makeSigningKey('ES256');
  const jwks = await startJwksServer(t, [key]);
  const registry = await buildTestRegistry(t, backend, { env: productionJwtEnv(jwks.jwksUri, extra) });
  const now = Math.floor(Date.now() / 1000);
  const token = await signToken(key, tokenClaims({ scope: 'registry:read registry:write', org_id: 'org-leeds', iat: now, exp: now + 300 }));
  const headers = (extraHeaders: Record<string, string> = {}) => ({ authorization: `Bearer ${token}`, ...extraHeaders });
  const register = (endpoints: unknown[], name = `Endpoint test ${Math.random()}`) =>
    registry.call({ method: 'POST', url: '/v1/agents', headers: writeHeaders(headers()), payload: agentBody({ display_name: name, owner: { org_id: 'org-leeds' }, endpoints }) });
  return { registry, register, headers };
}

const refusedIn = (answer: { status: number; body: any }, pointer: string): string => {
  assert.equal(answer.status, 422, JSON.stringify(answer.body));
  assert.equal(answer.body.error.code, 'VALIDATION_ERROR');
  const found = (answer.body.error.details.errors as Array<{ pointer: string; reason: string }>).find((error) => error.pointer === pointer);
  assert.ok(found, `no error at ${pointer}: ${JSON.stringify(answer.body.error.details)}`);
  return found.reason;
};

for (const backend of BACKENDS) {
  describe(`endpoint URLs [${backend}]`, () => {
    test('in production: only https for HTTP protocols, mllp or tcp for hl7v2-mllp, no private address; nothing stored, nothing advised', async (t) => {
      const { registry, register, headers } = await productionRegistry(t, backend);
      for (const url of ['javascript:alert(1)//', 'file:///etc/passwd', 'vbscript:msgbox(1)', 'mailto:triage', 'urn:example:triage', 'data:text/html,x', 'ftp://files.example.org/', 'http://agents.example.org/a2a']) {
        const reason = refusedIn(await register([{ url, protocol: 'mesh-a2a-jsonrpc' }]), '/endpoints/0/url');
        assert.match(reason, /takes https:\/\/ for protocol mesh-a2a-jsonrpc/, url);
      }
      for (const url of ['https://127.0.0.1:22/', 'https://localhost/a2a', 'https://[::1]/', 'https://10.1.2.3/', 'https://169.254.169.254/latest', 'https://2130706433/', 'https://[::ffff:192.168.0.1]/', 'mllp://0x7f.1:2575', 'tcp://192.168.1.20:2575']) {
        const protocol = /^(mllp|tcp):/.test(url) ? 'hl7v2-mllp' : 'fhir-rest';
        assert.match(refusedIn(await register([{ url, protocol }]), '/endpoints/0/url'), /private or link-local address, refused in production/, url);
      }
      assert.match(refusedIn(await register([{ url: 'https://hl7.example.org/adt', protocol: 'hl7v2-mllp' }]), '/endpoints/0/url'), /takes mllp:\/\/ or tcp:\/\/ for protocol hl7v2-mllp, not https:/);
      assert.match(refusedIn(await register([{ url: 'https://user:secret@agents.example.org/', protocol: 'fhir-rest' }]), '/endpoints/0/url'), /user name or password/);
      // Every problem at once, the health URL included.
      const both = await register([{ url: 'https://ok.example.org/', protocol: 'fhir-rest' }, { url: 'javascript:x', protocol: 'fhir-rest', health_url: 'http://127.0.0.1:9/health' }]);
      refusedIn(both, '/endpoints/1/url');
      assert.match(refusedIn(both, '/endpoints/1/health_url'), /http:\/\/ is refused in production/);
      const stored = await registry.storage.db.selectFrom('agents').select('id').execute();
      assert.equal(stored.length, 0, 'nothing refused was stored');

      const good = await register([{ url: 'https://agents.example.org/a2a', protocol: 'mesh-a2a-jsonrpc', priority: 0 }, { url: 'mllp://hl7.example.org:2575', protocol: 'hl7v2-mllp' }]);
      assert.equal(good.status, 201, JSON.stringify(good.body));
      // An update is held to the same rule.
      const update = await registry.call({ method: 'PUT', url: `/v1/agents/${ulidOf(good.body.agent_id)}`, headers: writeHeaders(headers({ 'if-match': '"1"' })), payload: { ...agentBody({ display_name: good.body.display_name, owner: { org_id: 'org-leeds' } }), jurisdiction: undefined, endpoints: [{ url: 'javascript:alert(1)//', protocol: 'mesh-a2a-jsonrpc' }] } });
      refusedIn(update, '/endpoints/0/url');
      const advice = await registry.call({ method: 'POST', url: '/v1/route', headers: headers(), payload: { target: good.body.agent_id } });
      assert.equal(advice.status, 200, JSON.stringify(advice.body));
      assert.equal(advice.body.selected.url, 'https://agents.example.org/a2a');
    });

    test('REGISTRY_ALLOW_PRIVATE_ENDPOINTS lets private addresses in (plain http too: a closed network), never another scheme', async (t) => {
      const { register } = await productionRegistry(t, backend, { REGISTRY_ALLOW_PRIVATE_ENDPOINTS: 'true' });
      assert.equal((await register([{ url: 'https://10.1.2.3/a2a', protocol: 'mesh-a2a-jsonrpc', health_url: 'https://10.1.2.3/health' }])).status, 201);
      assert.equal((await register([{ url: 'http://10.1.2.3/a2a', protocol: 'mesh-a2a-jsonrpc', health_url: 'http://10.1.2.3/health' }])).status, 201);
      refusedIn(await register([{ url: 'file:///etc/passwd', protocol: 'mesh-a2a-jsonrpc' }]), '/endpoints/0/url');
      assert.match(refusedIn(await register([{ url: 'http://agents.example.org/a2a', protocol: 'mesh-a2a-jsonrpc' }]), '/endpoints/0/url'), /http:\/\/ is refused in production/);
    });

    test('outside production: http and loopback addresses register (the shipped agents at the gateway on 127.0.0.1), other schemes do not', async (t) => {
      const registry = await buildTestRegistry(t, backend);
      const local = await registerAgent(registry, { endpoints: [{ url: 'http://127.0.0.1:8070/rpc/triage/', protocol: 'mesh-a2a-jsonrpc', health_url: 'http://127.0.0.1:8070/rpc/triage/health' }] });
      assert.equal(local.endpoints[0].url, 'http://127.0.0.1:8070/rpc/triage/');
      const refused = await registry.call({ method: 'POST', url: '/v1/agents', headers: writeHeaders(), payload: agentBody({ endpoints: [{ url: 'javascript:alert(1)//', protocol: 'mesh-a2a-jsonrpc' }] }) });
      assert.match(refusedIn(refused, '/endpoints/0/url'), /takes https:\/\/ or http:\/\/ for protocol mesh-a2a-jsonrpc, not javascript:/);
    });
  });
}
