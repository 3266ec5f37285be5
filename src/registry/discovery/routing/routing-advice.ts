import type { CallContext } from '../../../core/call-context.ts';
import type { Clock } from '../../../core/clock.ts';
import { ROUTING_TYP } from '../../../core/crypto/answer-types.ts';
import { withCompactJws } from '../../../core/crypto/json-members.ts';
import type { AgentRecord, PurposeOfUse } from '../../../contract/agent-record.ts';
import { agentTrustBundle, type SignedTrustBundle } from '../../../contract/trust-bundle.ts';
import type { TrustMarkEntry } from '../../../contract/oidf-trust-marks.ts';
import { acceptsPurpose } from '../agent-filters.ts';
import { createResponseCache } from '../response-cache.ts';
import type { RegistrySigner } from '../../signing-keys/index.ts';
import type { EndpointVerdict } from './endpoint-selection.ts';

type RoutedEndpoint = { endpoint: string; url: string; priority: number; protocol: string; region: string | null };

export type RoutingResponse = {
  resolved_target: string;
  selected: RoutedEndpoint & { weight: number; health: string };
  alternatives: RoutedEndpoint[];
  trust_bundle: SignedTrustBundle;
  constraints: { phi_allowed: boolean; max_concurrency_hint: number; rate_limit_rps_hint: number };
  evidence: { registry_id: string; record_version: string; delegation_chain: string[] };
};

export type RoutingAdviceDeps = {
  clock: Clock;
  signer: RegistrySigner;
  registryId: string;
  trustChain(): { delegationChain: string[]; statements: string[] };
  /** The registry's OIDF chain to the root, carried in each bundle (docs/federation.md, "One chain"). */
  oidfTrustChain(): Promise<string[] | undefined>;
  /** The OIDF trust marks the agent holds now, carried in its bundle. */
  agentTrustMarks(record: AgentRecord): Promise<TrustMarkEntry[]>;
  signResponses: boolean;
};

/** Defaults of the routing hints when the agent's policy tags give none (contract §4). */
export const DEFAULT_HINTS = { max_concurrency: 16, rate_limit_rps: 50 } as const;

/**
 * Writes routing advice (contract §4) for an agent and its endpoints in failover order: the JSON
 * bytes to send, with the agent's trust bundle, its constraints and the evidence, signed when the
 * registry signs its answers. Bundles and finished answers are kept (see below).
 */
export function createRoutingAdvice(deps: RoutingAdviceDeps) {
  // A bundle depends on the record version, the chain and the signing key; reusing one for a few
  // minutes of its hour saves a signature per route while leaving clients most of its lifetime.
  const now = () => deps.clock.now().getTime();
  const bundles = createResponseCache<SignedTrustBundle>({ maxEntries: 10_000, maxAgeMs: 5 * 60_000, now });

  async function bundleFor(record: AgentRecord, chain: ReturnType<RoutingAdviceDeps['trustChain']>, ctx: CallContext): Promise<SignedTrustBundle> {
    const trustChain = await deps.oidfTrustChain();
    // A chain is told apart by its statements' signatures (each rebuild signs them anew).
    const oidfKey = (trustChain ?? []).map((jwt) => jwt.slice(-12)).join(',');
    const key = [record.agent_id, record.version, deps.signer.kid, chain.delegationChain.join(' '), oidfKey].join('|');
    const cached = bundles.get(key, 0);
    if (cached) return cached;
    const trustMarks = await deps.agentTrustMarks(record);
    const bundle = await agentTrustBundle(record, { signer: deps.signer, registryId: deps.registryId, ...chain, trustChain, trustMarks, now: ctx.clock.now() });
    bundles.set(key, 0, bundle);
    return bundle;
  }

  // Advice carries no time and no nonce: the same agent version, endpoint order, health, bundle and
  // constraints are the same bytes, and a signature over the same bytes with the same key is as
  // good as a new one. The finished answers are kept, by a short key of what they are made from
  // (adviceKey), so a route to a busy agent is neither serialised nor signed again.
  const answers = createResponseCache<{ bundle: SignedTrustBundle; bytes: Buffer }>({ maxEntries: 2_000, maxAgeMs: 5 * 60_000, now });

  /** The advice as the JSON bytes to send: serialised once, signed over those bytes, the signature appended. */
  return async function adviseRoute(
    record: AgentRecord,
    ordered: EndpointVerdict[],
    purpose: PurposeOfUse | undefined,
    ctx: CallContext,
  ): Promise<Buffer> {
    const chain = deps.trustChain();
    const tags = record.policy_tags;
    // PHI only with an explicit yes from the agent and a purpose it accepts (contract §4).
    const phiAllowed = tags.phi_allowed === true && purpose !== undefined && acceptsPurpose(record, purpose);
    const bundle = await bundleFor(record, chain, ctx);
    const key = adviceKey(record, ordered, phiAllowed);
    const kept = answers.get(key, 0);
    if (kept?.bundle === bundle) return kept.bytes;
    const [first, ...rest] = ordered as [EndpointVerdict, ...EndpointVerdict[]];
    const response: RoutingResponse = {
      resolved_target: record.agent_id,
      selected: { ...routed(first), weight: first.endpoint.weight, health: first.health },
      alternatives: rest.map(routed),
      trust_bundle: bundle,
      constraints: {
        phi_allowed: phiAllowed,
        max_concurrency_hint: typeof tags.max_concurrency === 'number' ? tags.max_concurrency : DEFAULT_HINTS.max_concurrency,
        rate_limit_rps_hint: typeof tags.rate_limit_rps === 'number' ? tags.rate_limit_rps : DEFAULT_HINTS.rate_limit_rps,
      },
      evidence: { registry_id: deps.registryId, record_version: String(record.version), delegation_chain: chain.delegationChain },
    };
    const json = Buffer.from(JSON.stringify(response));
    const bytes = deps.signResponses ? withCompactJws(json, 'signed_response', await deps.signer.signJson(json, ROUTING_TYP)) : json;
    answers.set(key, 0, { bundle, bytes });
    return bytes;
  };
}

/**
 * Everything an answer is made from besides its record (named by id and version), its bundle and
 * the registry's own id: the endpoint order and each endpoint's health, and whether PHI is allowed.
 * The signing key and the delegation chain are not in it: they key the bundle (bundleFor), and a
 * kept answer is served only with the very bundle object it was made with.
 */
function adviceKey(record: AgentRecord, ordered: readonly EndpointVerdict[], phiAllowed: boolean): string {
  const order = ordered.map((v) => `${v.index}${v.health}`).join(',');
  return `${record.agent_id}|${record.version}|${order}|${phiAllowed}`;
}

function routed(verdict: EndpointVerdict): RoutedEndpoint {
  const { url, priority, protocol, region } = verdict.endpoint;
  return { endpoint: url, url, priority, protocol, region: region ?? null };
}
