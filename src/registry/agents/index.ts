// The agents feature's public face (agent records, their writes, cards, evidence and health): other features import only what this file exports.
export { toAgentRecord, toAgentRecords } from './agent-records.ts';
export type { AgentService } from './agent-service.ts';
export { TRUST_LEVELS } from './evidence/trust-validation.ts';
export type { HealthProber } from './health/health-prober.ts';
export { listAgentIdsWithProtocols } from './storage/agent-endpoint-store.ts';
export { agentVersions, countActiveEndpoints, countAgentsBy, findAgent, findAgents, listAgentPage, listTrustExpiring, rankDiscoverableBySkill } from './storage/agent-store.ts';
export type { AgentFilter, AgentRow } from './storage/agent-store.ts';
export { countAgentVersions, findAgentVersion, listAgentVersions } from './storage/agent-version-store.ts';
export type { AgentVersion } from './storage/agent-version-store.ts';
export { countActiveEndpointHealth, listDownEndpoints } from './storage/endpoint-health-store.ts';
export { countOwners, listOwnerPage } from './storage/owner-store.ts';
export { countEndpoints } from './storage/endpoint-count-store.ts';
