import type { Storage } from '../../core/storage/database.ts';
import { listDiscoverableBySkill } from '../../core/storage/stores/agent-store.ts';
import type { AgentRecord, PurposeOfUse, TokenBinding } from '../agents/agent-record.ts';
import { toAgentRecords } from '../agents/agent-service.ts';
import { acceptsPurpose, hasFeatures, hasRegion, speaksProtocol } from './agent-filters.ts';
import { scoreAgent, type ScoreBreakdown } from './ranking.ts';

/** A discovery query after normalisation (jurisdiction upper-case, feature lists split). */
export type DiscoveryQuery = {
  capability: string;
  jurisdiction?: string;
  require_features: string[];
  protocol?: string;
  token_binding?: TokenBinding;
  residency?: string;
  purpose_of_use?: PurposeOfUse;
  limit: number;
};

export type DiscoveryResult = AgentRecord & { score: number; score_breakdown: ScoreBreakdown; trust_bundle_url: string };

export type DiscoveryServiceDeps = {
  storage: Storage;
  /** The registry's own jurisdiction: preferred when the query names none. */
  registryJurisdiction: string;
  trustBundleUrl(agentId: string): string;
};

/** Candidates are read in slices so a selective filter does not load every agent with the skill. */
const MIN_SLICE = 50;

/**
 * Discovery (contract §4): only active, trust-validated agents with the capability; filters that need
 * the record (features, protocol, residency, purpose) are applied to candidates read in ranking order,
 * so the first `limit` that pass are the answer.
 */
export function createDiscoveryService(deps: DiscoveryServiceDeps) {
  return {
    async discover(query: DiscoveryQuery): Promise<DiscoveryResult[]> {
      const preferredJurisdiction = query.jurisdiction ?? deps.registryJurisdiction;
      const filter = {
        skill: query.capability,
        preferredJurisdiction,
        ...(query.jurisdiction ? { jurisdiction: query.jurisdiction } : {}),
        ...(query.token_binding ? { tokenBinding: query.token_binding } : {}),
      };
      // Without filters that need the record, every candidate is a result: read exactly `limit`.
      const filtersRecords = query.require_features.length > 0 || !!query.protocol || !!query.residency || !!query.purpose_of_use;
      const slice = filtersRecords ? Math.max(MIN_SLICE, query.limit * 2) : query.limit;
      const results: DiscoveryResult[] = [];
      for (let offset = 0; results.length < query.limit; offset += slice) {
        const rows = await listDiscoverableBySkill(deps.storage.db, filter, { offset, limit: slice });
        for (const record of await toAgentRecords(deps.storage.db, rows)) {
          if (!matches(record, query)) continue;
          results.push({ ...record, ...scoreAgent(record, preferredJurisdiction), trust_bundle_url: deps.trustBundleUrl(record.agent_id) });
          if (results.length === query.limit) break;
        }
        if (rows.length < slice) break;
      }
      return results;
    },
  };
}

export type DiscoveryService = ReturnType<typeof createDiscoveryService>;

function matches(record: AgentRecord, query: DiscoveryQuery): boolean {
  return (
    hasFeatures(record, query.require_features) &&
    (query.protocol === undefined || speaksProtocol(record, query.protocol)) &&
    (query.residency === undefined || hasRegion(record, query.residency)) &&
    (query.purpose_of_use === undefined || acceptsPurpose(record, query.purpose_of_use))
  );
}
