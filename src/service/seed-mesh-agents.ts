import { systemContext } from '../core/call-context.ts';
import type { Clock } from '../core/clock.ts';
import { findLiveAgentByOrgName } from '../registry/storage/stores/agent-store.ts';
import { runWrite } from '../registry/storage/write-unit.ts';
import { meshAgentRegistrations } from '../mesh/registration.ts';
import type { Endpoint } from '../contract/agent-record.ts';
import type { RegistryServices } from '../registry/services.ts';

/**
 * Registers the shipped mesh agents in the registry with endpoints at the gateway, so the standard
 * flow (discover → route → tasks/send) works on a fresh start. Idempotent: an agent already
 * registered is left alone, or updated when the gateway's address changed since.
 */
export async function seedMeshAgents(ward: RegistryServices, gatewayUrl: string, clock: Clock): Promise<string[]> {
  const ctx = systemContext(clock, 'seed-mesh-agents');
  const bodies = meshAgentRegistrations({ gatewayUrl, jurisdiction: ward.config.REGISTRY_JURISDICTION });
  const agentIds: string[] = [];
  for (const body of bodies) {
    const existing = await findLiveAgentByOrgName(ward.storage.db, body.owner.org_id, body.display_name);
    if (!existing) {
      const { result } = await runWrite(ward.storage, (unit) => ward.agents.register(unit, ctx, body));
      agentIds.push(result.agent_id);
      continue;
    }
    const endpoints = (existing.record as { endpoints: Endpoint[] }).endpoints;
    if (endpoints.map((e) => e.url).join() !== body.endpoints.map((e) => e.url).join()) {
      const { jurisdiction: _fixed, ...document } = body;
      await runWrite(ward.storage, (unit) => ward.agents.update(unit, ctx, existing.id, '*', document));
    }
    agentIds.push(existing.agent_uri);
  }
  return agentIds;
}
