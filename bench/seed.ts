import { systemContext } from '../src/core/call-context.ts';
import { systemClock } from '../src/core/clock.ts';
import { runWrite } from '../src/core/storage/write-unit.ts';
import type { RegistryServices } from '../src/registry/services.ts';

const JURISDICTIONS = ['GB', 'FR', 'DE', 'NL', 'IE', 'ES', 'IT', 'SE'];
const PROTOCOLS = ['mesh-a2a-jsonrpc', 'fhir-rest', 'hl7v2-mllp'];
export const SKILL_COUNT = 200;

/** The body of the n-th synthetic agent: two skills of 200, spread over jurisdictions and protocols. */
export function syntheticAgent(n: number) {
  return {
    display_name: `Synthetic agent ${n}`,
    jurisdiction: JURISDICTIONS[n % JURISDICTIONS.length] as string,
    endpoints: [
      { url: `https://agent-${n}.example.org/a2a`, protocol: PROTOCOLS[n % 3] as string, priority: n % 50, region: 'uk-south' },
      { url: `https://agent-${n}-b.example.org/a2a`, protocol: 'mesh-a2a-jsonrpc', priority: 60 + (n % 7), region: 'eu-west' },
    ],
    capabilities: {
      protocols: [PROTOCOLS[n % 3] as string, 'mesh-a2a-jsonrpc'],
      skills: [`skill.s${n % SKILL_COUNT}`, `skill.s${(n * 7 + 3) % SKILL_COUNT}`],
      features: n % 2 === 0 ? ['idempotency_strict'] : [],
      stream_resume: n % 3 === 0,
    },
    trust: {},
    owner: { org_id: `org-${n % 500}`, org_name: `Organisation ${n % 500}`, operator: `ops${n % 500}@example.org` },
    description: 'Synthetic agent for benchmarks: consent verification and triage support.',
    policy_tags: { purpose_of_use: ['treatment', 'operations'] },
  };
}

/** Registers `count` agents through the agent service, many per transaction. */
export async function seedAgents(ward: RegistryServices, count: number, batch = 500): Promise<void> {
  const ctx = systemContext(systemClock);
  for (let start = 0; start < count; start += batch) {
    await runWrite(ward.storage, async (unit) => {
      for (let n = start; n < Math.min(count, start + batch); n += 1) await ward.agents.register(unit, ctx, syntheticAgent(n));
    });
  }
}
