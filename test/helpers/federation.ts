import assert from 'node:assert/strict';
import { BUNDLE_TYP, type SignedTrustBundle } from '../../src/contract/trust-bundle.ts';
import type { TestContext } from 'node:test';
import type { Clock } from '../../src/core/clock.ts';
import type { Backend } from '../../src/registry/storage/database.ts';
import { buildTestRegistry, writeHeaders, type TestRegistry } from './registry.ts';

export type RunningRegistry = TestRegistry & { baseUrl: string; id: string };

/** A registry listening on a loopback port (other registries reach it over real HTTP). */
export async function startRegistry(
  t: Pick<TestContext, 'after'>,
  backend: Backend,
  env: Record<string, string>,
  options: { clock?: Clock; logs?: boolean } = {},
): Promise<RunningRegistry> {
  const registry = await buildTestRegistry(t, backend, { env: { REGISTRY_HEALTH_PROBES: 'false', ...env }, ...options });
  await registry.app.listen({ port: 0, host: '127.0.0.1' });
  const address = registry.app.server.address();
  if (!address || typeof address === 'string') throw new Error('not listening');
  return Object.assign(registry, { baseUrl: `http://127.0.0.1:${address.port}`, id: registry.app.ward.registryId });
}

/** The body registering `child` at its parent: its anchors, keys and address, as an operator would send them. */
export async function registrationBody(child: RunningRegistry, tier: 'sovereign' | 'organisational', overrides: Record<string, unknown> = {}) {
  const anchors = (await child.call({ method: 'GET', url: '/v1/trust/anchors' })).body.anchors;
  const { config } = child.app.ward;
  return {
    display_name: `${config.REGISTRY_NAME} registry`,
    name: config.REGISTRY_NAME,
    jurisdiction: config.REGISTRY_JURISDICTION,
    tier,
    trust_anchors: anchors.map(({ key_id, alg, jwks_uri, thumbprint_sha256 }: Record<string, string>) => ({ key_id, alg, jwks_uri, thumbprint_sha256 })),
    api_base_url: child.baseUrl,
    ...overrides,
  };
}

/** Registers `child` at `parent` and has the child fetch its first delegation at once. */
export async function delegate(parent: RunningRegistry, child: RunningRegistry, tier: 'sovereign' | 'organisational') {
  const response = await parent.call({ method: 'POST', url: '/v1/registries', headers: writeHeaders(), payload: await registrationBody(child, tier) });
  if (response.status !== 201) throw new Error(`delegation failed: ${response.status} ${JSON.stringify(response.body)}`);
  // A child started with REGISTRY_PARENT_URL fetches at start; if that fetch (a 404: the parent did not
  // know it yet) is still in flight, refresh() joins it. Asking once more then gets the grant.
  const first = await child.app.ward.parentLink.refresh().catch(() => false);
  if (!first && !(await child.app.ward.parentLink.refresh())) throw new Error('the child got no delegation');
  return response.body;
}

/** Root (GB) → sovereign GB `nhs` → organisational `leeds`, each on its own database and port. */
export async function threeTiers(t: Pick<TestContext, 'after'>, backend: Backend, options: { clock?: Clock } = {}) {
  const root = await startRegistry(t, backend, { REGISTRY_TIER: 'root', REGISTRY_NAME: 'root', REGISTRY_JURISDICTION: 'GB' }, options);
  const sovereign = await startRegistry(t, backend, { REGISTRY_TIER: 'sovereign', REGISTRY_NAME: 'nhs', REGISTRY_JURISDICTION: 'GB', REGISTRY_PARENT_URL: root.baseUrl }, options);
  const org = await startRegistry(t, backend, { REGISTRY_TIER: 'organisational', REGISTRY_NAME: 'leeds', REGISTRY_JURISDICTION: 'GB', REGISTRY_PARENT_URL: sovereign.baseUrl }, options);
  await delegate(root, sovereign, 'sovereign');
  await delegate(sovereign, org, 'organisational');
  return { root, sovereign, org };
}

/** What a client keeps to verify chains offline: the root's keys and URI (and where to ask online). */
export async function rootAnchor(root: RunningRegistry) {
  const jwks = (await root.call({ method: 'GET', url: '/.well-known/jwks.json' })).body;
  return { jwks, registry_id: root.id, api_base_url: root.baseUrl };
}

/**
 * `child`'s grant refresh once its parent revoked it: a fetch already in flight then (a timer's, a
 * key-change nudge's) may still come back granted and is joined by refresh(); one started after the
 * revocation is refused. So a granted answer is asked again, a few times at most.
 */
export async function refreshAfterRevocation(child: RunningRegistry): Promise<boolean> {
  for (let attempt = 0; attempt < 3; attempt += 1) {
    if (!(await child.app.ward.parentLink.refresh())) return false;
  }
  return true;
}

/** `registry`'s trust bundle about `subject` (200 asserted). */
export async function trustBundleOf(registry: RunningRegistry, subject: string): Promise<SignedTrustBundle> {
  const answer = await registry.call({ method: 'GET', url: `/v1/trust/bundle?subject=${encodeURIComponent(subject)}` });
  assert.equal(answer.status, 200, JSON.stringify(answer.body));
  return answer.body;
}

/** The bundle as `issuer` would sign it with `changes` (its own key: a genuine bundle of another shape). */
export async function resignedBundle(issuer: RunningRegistry, bundle: SignedTrustBundle, changes: Partial<SignedTrustBundle>): Promise<SignedTrustBundle> {
  const { signed_bundle: _old, ...fields } = { ...bundle, ...changes };
  return { ...fields, signed_bundle: await issuer.app.ward.signer.sign(fields, BUNDLE_TYP) };
}
