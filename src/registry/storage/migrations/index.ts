import type { Migration } from 'kysely';
import * as initial from './001-initial.ts';
import * as discovery from './002-discovery.ts';
import * as ledger from './003-ledger.ts';
import * as apiKeys from './004-api-keys.ts';
import * as usage from './005-usage.ts';
import * as federation from './006-federation.ts';
import * as operations from './007-operations.ts';
import * as computerUse from './008-computer-use.ts';
import * as discoveryRank from './009-discovery-rank.ts';
import * as agentNameUnique from './010-agent-name-unique.ts';
import * as batchToken from './011-batch-token.ts';
import * as ledgerSubjects from './012-ledger-subjects.ts';
import * as agentCards from './013-agent-cards.ts';
import * as agentVersions from './014-agent-versions.ts';
import * as agentEndpoints from './015-agent-endpoints.ts';
import * as computerUseModel from './016-computer-use-model.ts';
import * as clusterInstances from './017-cluster-instances.ts';
import * as registryEntityId from './017b-registry-entity-id.ts';
import * as fhirIndexCatchUp from './018-fhir-index-catch-up.ts';
import * as agentNameSkeleton from './019-agent-name-skeleton.ts';

/**
 * A migration and its phase (docs/operations.md, "Rolling upgrades"): `expand` (the default) only adds
 * what older builds ignore, so it runs while they serve; `contract` removes or tightens what an older
 * build may still use, so it runs only once no instance of an older build is alive.
 */
export type WardMigration = Migration & { readonly phase?: 'expand' | 'contract' };

/** Every migration, applied in name order; names never change once released. */
export const MIGRATIONS: Record<string, WardMigration> = {
  '001-initial': initial,
  '002-discovery': discovery,
  '003-ledger': ledger,
  '004-api-keys': apiKeys,
  '005-usage': usage,
  '006-federation': federation,
  '007-operations': operations,
  '008-computer-use': computerUse,
  '009-discovery-rank': discoveryRank,
  '010-agent-name-unique': agentNameUnique,
  '011-batch-token': batchToken,
  '012-ledger-subjects': ledgerSubjects,
  '013-agent-cards': agentCards,
  '014-agent-versions': agentVersions,
  '015-agent-endpoints': agentEndpoints,
  '016-computer-use-model': computerUseModel,
  '017-cluster-instances': clusterInstances,
  // Before 018 in name order: an expanding step behind a contracting one would wait with it (decisions.md 94).
  '017b-registry-entity-id': registryEntityId,
  '018-fhir-index-catch-up': fhirIndexCatchUp,
  '019-agent-name-skeleton': agentNameSkeleton,
};
