/**
 * Federated discovery (contract §5, docs/federation.md): a root or sovereign registry answers from
 * its own agents and asks each active child registry too, a bounded number at a time, each within
 * REGISTRY_FEDERATION_TIMEOUT_MS. A child's answer counts only if its signed_response verifies with
 * the keys this registry delegated to it, and only its results inside the child's jurisdiction are
 * kept. Results are merged by score; children that failed are reported, never silently dropped.
 */
import { compactVerify, createLocalJWKSet, decodeProtectedHeader, type JWK } from 'jose';
import type { Clock } from '../../core/clock.ts';
import type { RegistrySigner } from '../../core/crypto/registry-signer.ts';
import type { RegistryRow } from '../../core/storage/stores/registry-store.ts';
import type { DiscoveryQuery, DiscoveryResult } from '../discovery/discovery-service.ts';
import { keyValidAt, type ChildRegistries } from './child-registries.ts';
import { issueFederationToken } from './federation-token.ts';

export type FederatedResult = DiscoveryResult & { registry_id: string };

export type ChildOutcome = {
  registry_id: string;
  status: 'ok' | 'timeout' | 'unreachable' | 'error';
  result_count: number;
  /** Why a child's answer was not used (never a body from the child). */
  error?: string;
  /** The child's own answer was partial: one of its children did not answer. */
  partial?: boolean;
};

export type FederatedAnswer = { results: FederatedResult[]; children: ChildOutcome[] };

/** Children asked at once: enough for a country's organisations without opening hundreds of sockets. */
const FAN_OUT = 8;
const MAX_ANSWER_BYTES = 4 * 1024 * 1024;

export function createFederatedDiscovery(deps: {
  children: ChildRegistries;
  signer: RegistrySigner;
  registryId: string;
  clock: Clock;
  timeoutMs: number;
  fetch?: typeof fetch;
}) {
  const fetchImpl = deps.fetch ?? fetch;

  async function askChild(child: RegistryRow, query: DiscoveryQuery): Promise<{ outcome: ChildOutcome; results: FederatedResult[] }> {
    const failed = (status: ChildOutcome['status'], error: string) => ({ outcome: { registry_id: child.id, status, result_count: 0, error }, results: [] });
    if (!child.api_base_url) return failed('error', 'the child registry has no api_base_url');
    const params = new URLSearchParams({ capability: query.capability, limit: String(query.limit) });
    if (query.jurisdiction) params.set('jurisdiction', query.jurisdiction);
    if (query.require_features.length > 0) params.set('require_features', query.require_features.join(','));
    if (query.protocol) params.set('protocol', query.protocol);
    if (query.token_binding) params.set('token_binding', query.token_binding);
    if (query.residency) params.set('residency', query.residency);
    if (query.purpose_of_use) params.set('purpose_of_use', query.purpose_of_use);
    // A sovereign asks its own organisations in turn: the tree is walked one tier at a time.
    if (child.tier === 'sovereign') params.set('federated', 'true');
    const token = await issueFederationToken(deps.signer, { iss: deps.registryId, aud: child.id, now: deps.clock.now() });
    let text: string;
    try {
      const response = await fetchImpl(`${child.api_base_url}/v1/discover?${params}`, {
        headers: { authorization: `Bearer ${token}`, accept: 'application/json' },
        signal: AbortSignal.timeout(deps.timeoutMs),
        redirect: 'error',
      });
      text = await response.text();
      if (!response.ok) return failed('error', `HTTP ${response.status}`);
    } catch (error) {
      const name = (error as Error).name;
      return name === 'TimeoutError' || name === 'AbortError' ? failed('timeout', `no answer within ${deps.timeoutMs} ms`) : failed('unreachable', 'connection failed');
    }
    if (text.length > MAX_ANSWER_BYTES) return failed('error', 'answer too large');
    const signed = await signedAnswer(child, text);
    if (!signed) return failed('error', 'the answer is not signed by a key delegated to the child');
    const { results } = signed;
    const inside = results.filter((result) => jurisdictionOf(result.agent_id) === child.jurisdiction);
    const tagged = inside.map((result) => ({ ...result, registry_id: typeof result.registry_id === 'string' ? result.registry_id : child.id }));
    const dropped = results.length - inside.length;
    const outcome: ChildOutcome = {
      registry_id: child.id,
      status: 'ok',
      result_count: tagged.length,
      ...(dropped > 0 ? { error: `${dropped} result(s) outside ${child.jurisdiction} dropped` } : {}),
      ...(signed.partial ? { partial: true } : {}),
    };
    return { outcome, results: tagged };
  }

  /** The results inside the child's signed_response, if it verifies with the child's delegated keys. */
  async function signedAnswer(child: RegistryRow, text: string): Promise<{ results: Array<DiscoveryResult & { registry_id?: unknown }>; partial: boolean } | undefined> {
    try {
      const body = JSON.parse(text) as { signed_response?: unknown };
      if (typeof body.signed_response !== 'string') return undefined;
      const header = decodeProtectedHeader(body.signed_response);
      if ('jku' in header || 'x5u' in header || 'jwk' in header || 'x5c' in header) return undefined;
      const now = deps.clock.now();
      const keys = child.jwks.keys.filter((key) => keyValidAt(key, now)) as JWK[];
      const { payload } = await compactVerify(body.signed_response, createLocalJWKSet({ keys }), { algorithms: ['ES256', 'EdDSA', 'RS256'] });
      const signed = JSON.parse(new TextDecoder().decode(payload)) as { results?: unknown; federation?: { partial?: unknown } };
      if (!Array.isArray(signed.results)) return undefined;
      return { results: signed.results as Array<DiscoveryResult & { registry_id?: unknown }>, partial: signed.federation?.partial === true };
    } catch {
      return undefined;
    }
  }

  return {
    async discover(query: DiscoveryQuery, local: DiscoveryResult[]): Promise<FederatedAnswer> {
      const children = await deps.children.activeChildren();
      const answers: Array<{ outcome: ChildOutcome; results: FederatedResult[] }> = [];
      for (let start = 0; start < children.length; start += FAN_OUT) {
        answers.push(...(await Promise.all(children.slice(start, start + FAN_OUT).map((child) => askChild(child, query)))));
      }
      const merged = [...local.map((result) => ({ ...result, registry_id: deps.registryId })), ...answers.flatMap((answer) => answer.results)];
      // One ranking across registries: score first, then the agent id so equal scores stay in a stable order.
      merged.sort((a, b) => b.score - a.score || (a.agent_id < b.agent_id ? -1 : a.agent_id > b.agent_id ? 1 : 0));
      return { results: merged.slice(0, query.limit), children: answers.map((answer) => answer.outcome) };
    },
  };
}

export type FederatedDiscovery = ReturnType<typeof createFederatedDiscovery>;

function jurisdictionOf(agentId: unknown): string | undefined {
  const match = typeof agentId === 'string' ? /^registry:\/\/([a-z]{2})\/agents\//.exec(agentId) : null;
  return match?.[1]?.toUpperCase();
}
