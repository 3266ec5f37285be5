import type { Storage } from '../storage/database.ts';
import { protocolsMatching } from '../../core/vocabulary.ts';
import { rankDiscoverableBySkill } from '../agents/index.ts';
import type { AgentRecord, PurposeOfUse, TokenBinding } from '../../contract/agent-record.ts';
import { toAgentRecords } from '../agents/index.ts';
import { createAgentRows } from './agent-rows.ts';
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
  /** Agent rows kept between answers, checked by version (agent-rows.ts); 0 keeps none. */
  keptRows: number;
  /** The sequence of the last change this instance knows is committed: kept rows need no check while it holds. */
  committedSeq(): number;
  /** Milliseconds since the epoch: the shortcut above is taken for at most 30 s. */
  now(): number;
};

/**
 * Discovery (contract §4): only active, trust-validated agents with the capability; filters that need
 * the record (features, protocol, residency, purpose) are applied to candidates read in ranking order,
 * so the first `limit` that pass are the answer.
 */
export function createDiscoveryService(deps: DiscoveryServiceDeps) {
  const rows = createAgentRows({ db: deps.storage.db, maxEntries: deps.keptRows, committedSeq: deps.committedSeq, now: deps.now });

  /**
   * The matching agents in ranking order, read in slices that grow (×4, up to 400) so that a
   * selective filter takes few reads and an unselective one reads little more than it uses.
   */
  async function* ranked(query: DiscoveryQuery, firstSlice: number): AsyncGenerator<DiscoveryResult> {
    const preferredJurisdiction = query.jurisdiction ?? deps.registryJurisdiction;
    const filter = {
      skill: query.capability,
      preferredJurisdiction,
      ...(query.jurisdiction ? { jurisdiction: query.jurisdiction } : {}),
      ...(query.token_binding ? { tokenBinding: query.token_binding } : {}),
      // Narrowed in SQL by the copies on the skill rows; matched exactly below.
      ...(query.require_features.length > 0 ? { features: query.require_features } : {}),
      // An alias standing for several protocols is not narrowed in SQL (one token there); matched exactly below.
      ...(query.protocol && protocolsMatching(query.protocol).length === 1 ? { protocol: query.protocol } : {}),
    };
    for (let offset = 0, slice = firstSlice; ; offset += slice, slice = Math.min(slice * 4, MAX_SLICE)) {
      const ids = await rankDiscoverableBySkill(deps.storage.db, filter, { offset, limit: slice });
      for (const record of await toAgentRecords(deps.storage.db, await rows.read(ids))) {
        if (matches(record, query)) yield { ...record, ...scoreAgent(record, preferredJurisdiction), trust_bundle_url: deps.trustBundleUrl(record.agent_id) };
      }
      if (ids.length < slice) return;
    }
  }

  return {
    /** The kept agent rows' figures (hits, reads, size). */
    keptRowStats: () => rows.stats(),
    async discover(query: DiscoveryQuery): Promise<DiscoveryResult[]> {
      const results: DiscoveryResult[] = [];
      if (query.limit === 0) return results;
      // Without filters that only the record can decide, nearly every candidate is a result: read `limit`.
      for await (const result of ranked(query, filtersRecords(query) ? Math.max(MIN_SLICE, query.limit * 2) : query.limit)) {
        results.push(result);
        if (results.length === query.limit) break;
      }
      return results;
    },
    /**
     * The matching agents one at a time in ranking order, at most `query.limit`: routing takes the
     * first whose endpoints meet its request (usually the first), so the first read is of one record
     * (then 4, 16…): reading and parsing four records to use one was 8 % of a capability route's CPU.
     */
    async *candidates(query: DiscoveryQuery): AsyncGenerator<DiscoveryResult> {
      if (query.limit === 0) return;
      let count = 0;
      for await (const result of ranked(query, 1)) {
        yield result;
        if ((count += 1) === query.limit) return;
      }
    },
  };
}

/** The first slice when a filter only the record decides; later slices grow to at most MAX_SLICE. */
const MIN_SLICE = 50;
const MAX_SLICE = 400;

/** Residency and purpose are decided on the record alone (features and protocol are narrowed in SQL). */
function filtersRecords(query: DiscoveryQuery): boolean {
  return !!query.residency || !!query.purpose_of_use;
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
