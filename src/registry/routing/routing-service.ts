import type { CallContext } from '../../core/call-context.ts';
import type { Clock } from '../../core/clock.ts';
import { ROUTING_TYP } from '../../core/crypto/answer-types.ts';
import type { RegistrySigner } from '../trust/registry-signer.ts';
import { withCompactJws } from '../../core/crypto/json-members.ts';
import { WardError } from '../../core/errors.ts';
import { parseAgentId } from '../../core/ids.ts';
import type { AgentRecord, PurposeOfUse, TokenBinding } from '../../contract/agent-record.ts';
import type { AgentService } from '../agents/agent-service.ts';
import { acceptsPurpose } from '../discovery/agent-filters.ts';
import type { DiscoveryService } from '../discovery/discovery-service.ts';
import { createResponseCache } from '../discovery/response-cache.ts';
import { agentTrustBundle, type SignedTrustBundle } from '../../contract/trust-bundle.ts';
import { judgeEndpoints, orderForFailover, type EndpointVerdict, type RouteRequirements } from './endpoint-selection.ts';

export type RouteRequest = {
  target?: string;
  capability?: string;
  jurisdiction?: string;
  protocol?: string;
  required_features?: string[];
  residency?: { allowed_zones?: string[]; deny_cross_zone?: boolean };
  workload?: { token_binding?: TokenBinding; priority?: string };
  purpose?: { purpose_of_use?: PurposeOfUse };
  caller_jurisdiction?: string;
};

type RoutedEndpoint = { endpoint: string; url: string; priority: number; protocol: string; region: string | null };

export type RoutingResponse = {
  resolved_target: string;
  selected: RoutedEndpoint & { weight: number; health: string };
  alternatives: RoutedEndpoint[];
  trust_bundle: SignedTrustBundle;
  constraints: { phi_allowed: boolean; max_concurrency_hint: number; rate_limit_rps_hint: number };
  evidence: { registry_id: string; record_version: string; delegation_chain: string[] };
};

export type RoutingServiceDeps = {
  agents: AgentService;
  clock: Clock;
  discovery: DiscoveryService;
  signer: RegistrySigner;
  registryId: string;
  trustChain(): { delegationChain: string[]; statements: string[] };
  signResponses: boolean;
  /** A health reading older than this counts as unknown. */
  staleAfterMs: number;
  /** The sequence of the last change committed on any instance: records read for routing are kept while it holds. */
  committedSeq(): number;
};

/** Defaults of the routing hints when the agent's policy tags give none (contract §4). */
export const DEFAULT_HINTS = { max_concurrency: 16, rate_limit_rps: 50 } as const;
/** How many ranked candidates a capability route considers before answering NO_ROUTE. */
const CAPABILITY_CANDIDATES = 20;

/**
 * Routing advice (contract §4): for a target agent, or the best agent for a capability, the endpoint
 * to use and the failover order, with trust material, constraints and evidence. It advises; it never
 * proxies.
 */
export function createRoutingService(deps: RoutingServiceDeps) {
  // A bundle depends on the record version, the chain and the signing key; reusing one for a few
  // minutes of its hour saves a signature per route while leaving clients most of its lifetime.
  const now = () => deps.clock.now().getTime();
  const bundles = createResponseCache<SignedTrustBundle>({ maxEntries: 10_000, maxAgeMs: 5 * 60_000, now });

  async function bundleFor(record: AgentRecord, chain: ReturnType<RoutingServiceDeps['trustChain']>, ctx: CallContext): Promise<SignedTrustBundle> {
    const key = [record.agent_id, record.version, deps.signer.kid, chain.delegationChain.join(' ')].join('|');
    const cached = bundles.get(key, 0);
    if (cached) return cached;
    const bundle = await agentTrustBundle(record, { signer: deps.signer, registryId: deps.registryId, ...chain, now: ctx.clock.now() });
    bundles.set(key, 0, bundle);
    return bundle;
  }

  // Advice carries no time and no nonce: the same agent version, endpoint order, health, bundle and
  // constraints are the same bytes, and a signature over the same bytes with the same key is as
  // good as a new one. The finished answers are kept, by a short key of what they are made from
  // (adviceKey), so a route to a busy agent is neither serialised nor signed again.
  const answers = createResponseCache<{ bundle: SignedTrustBundle; bytes: Buffer }>({ maxEntries: 2_000, maxAgeMs: 5 * 60_000, now });

  function requirementsOf(request: RouteRequest): RouteRequirements {
    return {
      denyCrossZone: request.residency?.deny_cross_zone ?? false,
      requiredFeatures: request.required_features ?? [],
      ...(request.protocol ? { protocol: request.protocol } : {}),
      ...(request.residency?.allowed_zones ? { allowedZones: request.residency.allowed_zones } : {}),
      ...(request.workload?.token_binding ? { tokenBinding: request.workload.token_binding } : {}),
      ...(request.purpose?.purpose_of_use ? { purpose: request.purpose.purpose_of_use } : {}),
      ...(request.caller_jurisdiction ? { callerJurisdiction: request.caller_jurisdiction } : {}),
    };
  }

  // A target's record, kept while nothing is committed and for at most 5 s: every change of a
  // record, its status, trust or endpoints' health status moves the event sequence; a reading that
  // only confirms a status emits nothing and reaches routing within 5 s, against a staleness window
  // of three probe intervals. Saves a query and a JSON parse per route to a busy agent.
  const records = createResponseCache<AgentRecord>({ maxEntries: 10_000, maxAgeMs: 5_000, now });
  // The agent a route by capability chose (its id), per request (every field but the request id),
  // kept the same way; its record comes from `records`. Whether an agent qualifies depends only on
  // its record and the request (health orders endpoints, never excludes them), so a hit needs no
  // second look. Saves the ranking queries of a capability that many callers route to.
  const chosen = createResponseCache<string>({ maxEntries: 10_000, maxAgeMs: 5_000, now });

  async function recordOf(ulid: string): Promise<AgentRecord> {
    const generation = deps.committedSeq();
    const cached = records.get(ulid, generation);
    if (cached) return cached;
    const record = await deps.agents.get(ulid);
    records.set(ulid, generation, record);
    return record;
  }

  async function resolveTarget(target: string): Promise<AgentRecord> {
    const parsed = parseAgentId(target);
    if (!parsed) throw new WardError('AGENT_NOT_FOUND', undefined, { target });
    const record = await recordOf(parsed.ulid);
    if (parsed.jurisdiction && parsed.jurisdiction !== record.jurisdiction) throw new WardError('AGENT_NOT_FOUND', undefined, { target });
    if (record.status !== 'active' || record.trust_validation.state !== 'validated') {
      throw new WardError('AGENT_NOT_ACTIVE', 'The agent is not active and trust-validated, so it is not routable.', {
        agent_id: record.agent_id,
        status: record.status,
        trust_validation_state: record.trust_validation.state,
      });
    }
    return record;
  }

  function describeExclusions(verdicts: readonly EndpointVerdict[]) {
    return verdicts.map((v) => ({ index: v.index, url: v.endpoint.url, reasons: v.reasons }));
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

  /** The advice as the JSON bytes to send: serialised once, signed over those bytes, the signature appended. */
  async function build(record: AgentRecord, ordered: EndpointVerdict[], request: RouteRequest, ctx: CallContext): Promise<Buffer> {
    const chain = deps.trustChain();
    const tags = record.policy_tags;
    const purpose = request.purpose?.purpose_of_use;
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
  }

  return {
    /** The advice for `request` as the JSON bytes of a {@link RoutingResponse}, with `signed_response` appended when the registry signs its answers. */
    async route(ctx: CallContext, request: RouteRequest): Promise<Buffer> {
      const requirements = requirementsOf(request);
      const judge = (record: AgentRecord) => judgeEndpoints(record, requirements, { now: ctx.clock.now(), staleAfterMs: deps.staleAfterMs });
      if (request.target) {
        const record = await resolveTarget(request.target);
        const verdicts = judge(record);
        const ordered = orderForFailover(verdicts, ctx.requestId);
        if (ordered.length === 0) {
          throw new WardError('NO_ROUTE', 'No endpoint of the agent meets the request.', { agent_id: record.agent_id, endpoints: describeExclusions(verdicts) });
        }
        return build(record, ordered, request, ctx);
      }
      const key = JSON.stringify(request);
      const generation = deps.committedSeq();
      const earlier = chosen.get(key, generation);
      if (earlier) {
        const record = await recordOf(earlier);
        return build(record, orderForFailover(judge(record), ctx.requestId), request, ctx);
      }
      const candidates = deps.discovery.candidates({
        capability: request.capability as string,
        require_features: request.required_features ?? [],
        limit: CAPABILITY_CANDIDATES,
        ...(request.jurisdiction ? { jurisdiction: request.jurisdiction } : {}),
        ...(request.protocol ? { protocol: request.protocol } : {}),
        ...(request.workload?.token_binding ? { token_binding: request.workload.token_binding } : {}),
        ...(request.purpose?.purpose_of_use ? { purpose_of_use: request.purpose.purpose_of_use } : {}),
      });
      const rejected = [];
      for await (const candidate of candidates) {
        const verdicts = judge(candidate);
        const ordered = orderForFailover(verdicts, ctx.requestId);
        if (ordered.length > 0) {
          const ulid = (parseAgentId(candidate.agent_id) as { ulid: string }).ulid;
          chosen.set(key, generation, ulid);
          records.set(ulid, generation, candidate);
          return build(candidate, ordered, request, ctx);
        }
        rejected.push({ agent_id: candidate.agent_id, endpoints: describeExclusions(verdicts) });
      }
      throw new WardError('NO_ROUTE', `No agent with the capability "${request.capability}" has an endpoint that meets the request.`, {
        capability: request.capability,
        candidates: rejected,
      });
    },
  };
}

export type RoutingService = ReturnType<typeof createRoutingService>;

function routed(verdict: EndpointVerdict): RoutedEndpoint {
  const { url, priority, protocol, region } = verdict.endpoint;
  return { endpoint: url, url, priority, protocol, region: region ?? null };
}
