/**
 * The typed calls of the registry's API, one group per part of the contract: each is a path, a method
 * and the registry's own request and response schemas (`src/contract/schemas/`), sent through the
 * client's transport. The registry client (./registry-client.ts) puts the groups together.
 */
import type { Static } from 'typebox';
import type * as Agents from '../contract/schemas/agent-schemas.ts';
import type * as ComputerUse from '../contract/schemas/computer-use-schemas.ts';
import type * as Discovery from '../contract/schemas/discovery-schemas.ts';
import type * as Events from '../contract/schemas/event-schemas.ts';
import type * as Keys from '../contract/schemas/key-schemas.ts';
import type * as Operations from '../contract/schemas/operations-schemas.ts';
import type * as Registries from '../contract/schemas/registry-schemas.ts';
import type * as Ledger from '../contract/schemas/transparency-schemas.ts';
import type * as Usage from '../contract/schemas/usage-schemas.ts';
import type { AnswerVerifier } from './answer-verifier.ts';
import { openEventStream, type StreamPosition } from './event-stream.ts';
import { queryString as query, segment as id, send, type CallOptions, type Transport } from './registry-transport.ts';

export type AgentRecord = Static<typeof Agents.AgentRecordSchema>;
export type StatusAction = 'suspend' | 'reinstate' | 'retire' | 'revoke';

/** Where the registry publishes its public signing keys. */
export const JWKS_PATH = '/.well-known/jwks.json';

/** The registry itself: metadata, keys, health and readiness, the caller, the operator's overview. */
export function operationsCalls(t: Transport) {
  return {
    metadata: (call: CallOptions = {}) => send<Record<string, unknown>>(t, 'GET', '/.well-known/agent-registry', call),
    jwks: (call: CallOptions = {}) => send<{ keys: Array<Record<string, unknown>> }>(t, 'GET', JWKS_PATH, call),
    health: (call: CallOptions = {}) => send<{ status: string; storage: string }>(t, 'GET', '/health', call),
    /** `GET /readyz`: a success once storage, migrations and Redis answer; 503 with `details.checks` otherwise. */
    readiness: (call: CallOptions = {}) => send<{ status: 'ready'; checks: Record<string, { ok: boolean; detail: string }> }>(t, 'GET', '/readyz', call),
    caller: (call: CallOptions = {}) => send<Static<typeof Operations.CallerSchema>>(t, 'GET', '/v1/caller', call),
    overview: (call: CallOptions = {}) => send<Static<typeof Operations.OverviewSchema>>(t, 'GET', '/v1/admin/overview', call),
    diagnostics: (call: CallOptions = {}) => send<Static<typeof Operations.DiagnosticsSchema>>(t, 'GET', '/v1/admin/diagnostics', call),
  };
}

/** Agents and their events (contract §3, §6). */
export function agentCalls(t: Transport) {
  return {
    listAgents: (filter: Static<typeof Agents.ListAgentsQuery> = {}, call: CallOptions = {}) =>
      send<Static<typeof Agents.AgentListSchema>>(t, 'GET', `/v1/agents${query(filter)}`, call),
    getAgent: (agentId: string, call: CallOptions = {}) => send<AgentRecord>(t, 'GET', `/v1/agents/${id(agentId)}`, call),
    registerAgent: (body: Static<typeof Agents.RegisterAgentBody>, call: CallOptions = {}) => send<AgentRecord>(t, 'POST', '/v1/agents', { ...call, body }),
    /** `POST /v1/agents/from-card`: the registry reads, checks and verifies the A2A card at `card_url` (docs/mesh.md, "Signed cards"). */
    registerAgentFromCard: (body: Static<typeof Agents.RegisterFromCardBody>, call: CallOptions = {}) =>
      send<Static<typeof Agents.AgentFromCardSchema>>(t, 'POST', '/v1/agents/from-card', { ...call, body }),
    updateAgent: (agentId: string, body: Static<typeof Agents.UpdateAgentBody>, call: CallOptions = {}) =>
      send<AgentRecord>(t, 'PUT', `/v1/agents/${id(agentId)}`, { ...call, body }),
    changeAgentStatus: (agentId: string, action: StatusAction, reason: string | undefined, call: CallOptions = {}) =>
      send<AgentRecord>(t, 'POST', `/v1/agents/${id(agentId)}/${action}`, { ...call, body: reason === undefined ? {} : { reason } }),
    /**
     * Opens the change stream (contract §6) and hands back the live response, not its text: the
     * caller reads or forwards the body as it arrives. Only the connection is bounded by the timeout;
     * `call.signal` ends the stream.
     */
    openEventStream: (position: StreamPosition, call: CallOptions = {}) => openEventStream(t, position, call),
    events: (filter: Static<typeof Events.EventHistoryQuery> = {}, call: CallOptions = {}) =>
      send<Static<typeof Events.EventHistorySchema>>(t, 'GET', `/v1/events${query(filter)}`, call),
  };
}

/** Discovery and routing (contract §4), each answer checked by `verify` (a pass-through when signatures are not verified). */
export function discoveryCalls(t: Transport, verify: AnswerVerifier) {
  return {
    discover: async (filter: Static<typeof Discovery.DiscoverQuery>, call: CallOptions = {}) =>
      verify('discovery', await send<Static<typeof Discovery.DiscoveryResponseSchema>>(t, 'GET', `/v1/discover${query(filter)}`, call), { capability: filter.capability }),
    route: async (body: Static<typeof Discovery.RouteBody>, call: CallOptions = {}) =>
      verify('routing', await send<Static<typeof Discovery.RoutingResponseSchema>>(t, 'POST', '/v1/route', { ...call, body }), { target: body.target ?? body.target_agent_id }),
  };
}

/** Trust anchors, bundles, the signing key, and the child registries (contract §5). */
export function trustCalls(t: Transport) {
  return {
    trustAnchors: (call: CallOptions = {}) => send<{ anchors: Array<Static<typeof Discovery.TrustAnchorSchema>> }>(t, 'GET', '/v1/trust/anchors', call),
    trustBundle: (subject: string, call: CallOptions = {}) =>
      send<Static<typeof Discovery.TrustBundleSchema>>(t, 'GET', `/v1/trust/bundle${query({ subject })}`, call),
    rotateSigningKey: (body: Static<typeof Registries.RotateKeyBody>, call: CallOptions = {}) =>
      send<Static<typeof Registries.RotatedKeySchema>>(t, 'POST', '/v1/trust/keys/rotate', { ...call, body }),
    listRegistries: (filter: Static<typeof Registries.ListRegistriesQuery> = {}, call: CallOptions = {}) =>
      send<Static<typeof Registries.RegistryListSchema>>(t, 'GET', `/v1/registries${query(filter)}`, call),
    getRegistry: (registryId: string, call: CallOptions = {}) =>
      send<Static<typeof Registries.RegistryRecordSchema>>(t, 'GET', `/v1/registries/${id(registryId)}`, call),
    registerRegistry: (body: Static<typeof Registries.RegisterRegistryBody>, call: CallOptions = {}) =>
      send<Static<typeof Registries.RegistryRecordSchema>>(t, 'POST', '/v1/registries', { ...call, body }),
    revokeRegistry: (registryId: string, reason: string, call: CallOptions = {}) =>
      send<Static<typeof Registries.RegistryRecordSchema>>(t, 'POST', `/v1/registries/${id(registryId)}/revoke`, { ...call, body: { reason } }),
  };
}

/** The transparency ledger (contract §6). */
export function ledgerCalls(t: Transport) {
  return {
    treeHead: (call: CallOptions = {}) => send<Static<typeof Ledger.SignedTreeHeadResponse>>(t, 'GET', '/v1/transparency/sth', call),
    ledgerEntries: (filter: Static<typeof Ledger.EntriesQuery>, call: CallOptions = {}) =>
      send<Static<typeof Ledger.EntriesResponse>>(t, 'GET', `/v1/transparency/entries${query(filter)}`, call),
    inclusionProof: (filter: Static<typeof Ledger.InclusionQuery>, call: CallOptions = {}) =>
      send<Static<typeof Ledger.InclusionResponse>>(t, 'GET', `/v1/transparency/proof/inclusion${query(filter)}`, call),
    consistencyProof: (filter: Static<typeof Ledger.ConsistencyQuery>, call: CallOptions = {}) =>
      send<Static<typeof Ledger.ConsistencyResponse>>(t, 'GET', `/v1/transparency/proof/consistency${query(filter)}`, call),
  };
}

/** API keys, usage and pricing tiers (contract §7). */
export function billingCalls(t: Transport) {
  return {
    createApiKey: (body: Static<typeof Keys.CreateApiKeyBody>, call: CallOptions = {}) =>
      send<Static<typeof Keys.CreatedApiKeySchema>>(t, 'POST', '/v1/admin/billing/api-keys', { ...call, body }),
    listApiKeys: (filter: Static<typeof Keys.ListApiKeysQuery> = {}, call: CallOptions = {}) =>
      send<Static<typeof Keys.ApiKeyListSchema>>(t, 'GET', `/v1/admin/billing/api-keys${query(filter)}`, call),
    getApiKey: (keyId: string, call: CallOptions = {}) => send<Static<typeof Keys.ApiKeySchema>>(t, 'GET', `/v1/admin/billing/api-keys/${id(keyId)}`, call),
    revokeApiKey: (keyId: string, call: CallOptions = {}) => send<undefined>(t, 'DELETE', `/v1/admin/billing/api-keys/${id(keyId)}`, call),
    usage: (filter: Static<typeof Usage.UsageSummaryQuery>, call: CallOptions = {}) =>
      send<Static<typeof Usage.UsageSummarySchema>>(t, 'GET', `/v1/admin/billing/usage${query(filter)}`, call),
    liveUsage: (keyId: string, call: CallOptions = {}) =>
      send<Static<typeof Usage.LiveUsageSchema>>(t, 'GET', `/v1/admin/billing/usage/${id(keyId)}/live`, call),
    tiers: (call: CallOptions = {}) => send<Static<typeof Keys.TiersSchema>>(t, 'GET', '/v1/admin/billing/tiers', call),
  };
}

/** Computer-use runs, read (docs/computer-use.md): a page of runs newest first, and one run with its turns. */
export function computerUseCalls(t: Transport) {
  return {
    listComputerUseRuns: (filter: Static<typeof ComputerUse.ListRunsQuery> = {}, call: CallOptions = {}) =>
      send<Static<typeof ComputerUse.RunListSchema>>(t, 'GET', `/v1/admin/computer-use/runs${query(filter)}`, call),
    getComputerUseRun: (sessionId: string, call: CallOptions = {}) =>
      send<Static<typeof ComputerUse.RunSchema>>(t, 'GET', `/v1/admin/computer-use/runs/${id(sessionId)}`, call),
    /**
     * A turn's screenshot as PNG bytes, or the status the registry answered instead (404 for no such
     * turn or one the PHI guard withheld); null status when it could not be reached in time.
     */
    computerUseScreenshot: async (sessionId: string, turn: number, call: CallOptions = {}): Promise<{ status: number | null; png: Buffer | null }> => {
      const timeout = AbortSignal.timeout(t.timeoutMs);
      try {
        const response = await t.fetch(`${t.baseUrl}/v1/admin/computer-use/runs/${id(sessionId)}/screenshots/${turn}`, {
          headers: { ...t.headers, accept: 'image/png' },
          signal: call.signal ? AbortSignal.any([call.signal, timeout]) : timeout,
          redirect: 'manual',
        });
        const png = response.ok && response.headers.get('content-type') === 'image/png' ? Buffer.from(await response.arrayBuffer()) : null;
        if (!png) await response.body?.cancel();
        return { status: response.status, png };
      } catch {
        return { status: null, png: null };
      }
    },
  };
}
