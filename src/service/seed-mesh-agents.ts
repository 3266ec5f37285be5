import { systemContext } from '../core/call-context.ts';
import type { Clock } from '../core/clock.ts';
import { meshAgentRegistrations } from '../mesh/registration.ts';
import type { AgentRecord } from '../contract/agent-record.ts';
import type { RegistryServices } from '../registry/plugins/registry-services.ts';

/**
 * Registers the shipped mesh agents in the registry with endpoints at the gateway, so the standard
 * flow (discover → route → tasks/send) works on a fresh start. Idempotent: an agent already
 * registered is left alone, or updated when the gateway's address (or the endpoint's health URL) changed since. Every write goes
 * through the agent service as a registration or a replacement through the API would, with the
 * same records, events and ledger entries; the seed has no idempotency key, because it makes each
 * write once by looking first.
 */
export async function seedMeshAgents(ward: RegistryServices, gatewayUrl: string, clock: Clock): Promise<string[]> {
  const write = { ctx: systemContext(clock, 'seed-mesh-agents') };
  const bodies = meshAgentRegistrations({ gatewayUrl, jurisdiction: ward.config.REGISTRY_JURISDICTION });
  const agentIds: string[] = [];
  for (const body of bodies) {
    const existing = await ward.agents.findLiveByOrgName(body.owner.org_id, body.display_name);
    if (!existing) {
      const registered = await ward.agents.registerOnce(write, body);
      agentIds.push((registered.body as AgentRecord).agent_id);
      continue;
    }
    const where = (endpoints: readonly { url: string; health_url?: string | undefined }[]) => endpoints.map((e) => `${e.url} ${e.health_url ?? ''}`).join();
    if (where(existing.endpoints) !== where(body.endpoints)) {
      const { jurisdiction: _fixed, ...document } = body;
      await ward.agents.updateOnce(write, existing.agent_id, '*', document);
    }
    agentIds.push(existing.agent_id);
  }
  return agentIds;
}
