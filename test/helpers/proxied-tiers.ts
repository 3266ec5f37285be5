import type { ServerResponse } from 'node:http';
import type { TestContext } from 'node:test';
import type { Clock } from '../../src/core/clock.ts';
import { eventually } from './eventually.ts';
import { delegate, startRegistry, type RunningRegistry } from './federation.ts';
import { startFrontProxy } from './front-proxy.ts';
import { writeHeaders, type BACKENDS } from './registry.ts';

export const MINUTE = 60_000;

/** A clock the test moves forward, shared by the registries. */
export function movableClock() {
  let offset = 0;
  return { now: () => new Date(Date.now() + offset), advance: (ms: number) => (offset += ms) };
}

/** Root → sovereign (reached only through `proxy`, its public address) → organisation. */
export async function proxiedTiers(t: TestContext, backend: (typeof BACKENDS)[number], options: { clock?: Clock; logs?: boolean } = {}) {
  const root = await startRegistry(t, backend, { REGISTRY_TIER: 'root', REGISTRY_NAME: 'root', REGISTRY_JURISDICTION: 'GB' }, options);
  const proxy = await startFrontProxy(t);
  const sovereign = await startRegistry(
    t,
    backend,
    { REGISTRY_TIER: 'sovereign', REGISTRY_NAME: 'nhs', REGISTRY_JURISDICTION: 'GB', REGISTRY_PARENT_URL: root.baseUrl, REGISTRY_PUBLIC_URL: proxy.url },
    options,
  );
  proxy.target = sovereign.baseUrl;
  sovereign.baseUrl = proxy.url;
  const org = await startRegistry(t, backend, { REGISTRY_TIER: 'organisational', REGISTRY_NAME: 'leeds', REGISTRY_JURISDICTION: 'GB', REGISTRY_PARENT_URL: proxy.url }, options);
  await delegate(root, sovereign, 'sovereign');
  await delegate(sovereign, org, 'organisational');
  return { root, sovereign, org, proxy };
}

/** The parent revokes the child, as its operator does. */
export const revoke = (parent: RunningRegistry, child: RunningRegistry) =>
  parent.call({ method: 'POST', url: `/v1/registries/${encodeURIComponent(child.id)}/revoke`, headers: writeHeaders(), payload: { reason: 'contract ended' } });

/** Ward's own federation endpoints switched off at the proxy: only OpenID Federation can tell a child. */
export function wardFederationOff(request: { url?: string }, response: ServerResponse): boolean {
  if (!request.url?.startsWith('/v1/federation/')) return false;
  response.writeHead(503).end();
  return true;
}

/** An OIDF error answer. */
export function answerError(response: ServerResponse, status: number, error: string): true {
  response.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify({ error, error_description: error }));
  return true;
}

/**
 * Waits for the rebuild of `registry`'s own chain under way to end in a refusal saying `why`: the
 * warning the round logs as it ends (the registry built with `logs: true`), the first such one after
 * the `since` warnings already logged. What a test checks after it is what that round left: the
 * positive marker after which "nothing was revoked, nothing learnt" can be asserted.
 */
export function rebuildRefused(registry: RunningRegistry, since: number, why: RegExp): Promise<string> {
  return eventually(
    () => registry.warnings.slice(since).find((warning) => warning.startsWith('building the OpenID Federation trust chain failed') && why.test(warning)),
    () => `a rebuild refused (${why.source}); warnings since: ${JSON.stringify(registry.warnings.slice(since))}`,
  );
}
