import type { CallContext } from '../../../core/call-context.ts';
import { WardError } from '../../../core/errors.ts';
import { parseAgentId } from '../../../core/ids.ts';
import type { AgentRecord, PurposeOfUse, TokenBinding } from '../../../contract/agent-record.ts';
import type { AgentService } from '../../agents/index.ts';
import type { DiscoveryService } from '../discovery-service.ts';
import { createResponseCache } from '../response-cache.ts';
import { createRoutingAdvice, type RoutingAdviceDeps } from './routing-advice.ts';
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

/** What routing needs: what its signed advice needs (routing-advice.ts), and the records and health to choose from. */
export type RoutingServiceDeps = RoutingAdviceDeps & {
  agents: AgentService;
  discovery: DiscoveryService;
  /** A health reading older than this counts as unknown. */
  staleAfterMs: number;
  /** The sequence of the last change committed on any instance: records read for routing are kept while it holds. */
  committedSeq(): number;
};

/** How many ranked candidates a capability route considers before answering NO_ROUTE. */
const CAPABILITY_CANDIDATES = 20;

/**
 * Routing advice (contract §4): for a target agent, or the best agent for a capability, the endpoint
 * to use and the failover order, with trust material, constraints and evidence. It advises; it never
 * proxies.
 */
export function createRoutingService(deps: RoutingServiceDeps) {
  const adviseRoute = createRoutingAdvice(deps);
  const now = () => deps.clock.now().getTime();

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
        return adviseRoute(record, ordered, request.purpose?.purpose_of_use, ctx);
      }
      const key = JSON.stringify(request);
      const generation = deps.committedSeq();
      const earlier = chosen.get(key, generation);
      if (earlier) {
        const record = await recordOf(earlier);
        return adviseRoute(record, orderForFailover(judge(record), ctx.requestId), request.purpose?.purpose_of_use, ctx);
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
          return adviseRoute(candidate, ordered, request.purpose?.purpose_of_use, ctx);
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

/** What a request asks of an endpoint, in the terms of endpoint-selection.ts. */
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
