import { systemContext } from '../src/core/call-context.ts';
import { systemClock } from '../src/core/clock.ts';
import { runWrite } from '../src/registry/storage/write-unit.ts';
import type { RegistryServices } from '../src/registry/plugins/registry-services.ts';

const JURISDICTIONS = ['GB', 'FR', 'DE', 'NL', 'IE', 'ES', 'IT', 'SE'];
const PROTOCOLS = ['mesh-a2a-jsonrpc', 'fhir-rest', 'hl7v2-mllp'];
export const SKILL_COUNT = 200;

/** The first endpoint's URL: each protocol takes only its own schemes (HL7 v2 over MLLP is `mllp://`). */
function firstEndpointUrl(n: number): string {
  return n % 3 === 2 ? `mllp://agent-${n}.example.org:2575` : `https://agent-${n}.example.org/a2a`;
}

/** The body of the n-th synthetic agent: two skills of 200, spread over jurisdictions and protocols. */
export function syntheticAgent(n: number) {
  return {
    display_name: `Synthetic agent ${n}`,
    jurisdiction: JURISDICTIONS[n % JURISDICTIONS.length] as string,
    endpoints: [
      { url: firstEndpointUrl(n), protocol: PROTOCOLS[n % 3] as string, priority: n % 50, region: 'uk-south' },
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

/**
 * Seeds `count` agents into a migrated PostgreSQL schema with one `generate_series` statement per
 * table: the same agents `syntheticAgent` describes (ids are ULIDs `01J` + the number), at a million
 * in about a minute instead of the service's hours. Only the benches use it; they seed through the
 * service wherever that is fast enough.
 */
export async function seedAgentsSql(databaseUrl: string, schema: string, count: number): Promise<void> {
  const pg = (await import('pg')).default;
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  const at = new Date().toISOString();
  const js = `(array[${JURISDICTIONS.map((j) => `'${j}'`).join(',')}])[g % ${JURISDICTIONS.length} + 1]`;
  const protocol = `(array[${PROTOCOLS.map((p) => `'${p}'`).join(',')}])[g % 3 + 1]`;
  const id = `'01J' || lpad(g::text, 23, '0')`;
  const record = `json_build_object(
      'display_name', 'Synthetic agent ' || g,
      'endpoints', json_build_array(
        json_build_object('url', case when g % 3 = 2 then 'mllp://agent-' || g || '.example.org:2575' else 'https://agent-' || g || '.example.org/a2a' end, 'protocol', ${protocol}, 'priority', g % 50, 'weight', 100, 'region', 'uk-south'),
        json_build_object('url', 'https://agent-' || g || '-b.example.org/a2a', 'protocol', 'mesh-a2a-jsonrpc', 'priority', 60 + g % 7, 'weight', 100, 'region', 'eu-west')),
      'capabilities', json_build_object(
        'stream_resume', g % 3 = 0,
        'protocols', case when g % 3 = 0 then json_build_array('mesh-a2a-jsonrpc') else json_build_array(${protocol}, 'mesh-a2a-jsonrpc') end,
        'skills', case when g % ${SKILL_COUNT} = (g * 7 + 3) % ${SKILL_COUNT} then json_build_array('skill.s' || g % ${SKILL_COUNT})
                       else json_build_array('skill.s' || g % ${SKILL_COUNT}, 'skill.s' || (g * 7 + 3) % ${SKILL_COUNT}) end,
        'features', case when g % 2 = 0 then json_build_array('idempotency_strict') else json_build_array() end,
        'token_binding', 'none'),
      'trust', json_build_object('certificates', json_build_array(), 'signatures', json_build_array(), 'attestations', json_build_array()),
      'owner', json_build_object('org_id', 'org-' || g % 500, 'org_name', 'Organisation ' || g % 500, 'operator', 'ops' || g % 500 || '@example.org'),
      'description', 'Synthetic agent for benchmarks: consent verification and triage support.',
      'policy_tags', json_build_object('purpose_of_use', json_build_array('treatment', 'operations')),
      'trust_validation', json_build_object('state', 'validated', 'level', 0, 'checked_at', '${at}', 'errors', json_build_array(), 'expires_at', null),
      'status_reason', null)::text`;
  try {
    await client.query(`SET search_path TO "${schema}"`);
    await client.query(`
      INSERT INTO agents (id, agent_uri, jurisdiction, status, display_name, org_id, version, trust_state, trust_level, record,
                          created_at, updated_at, token_binding, best_priority, health_rank, trust_expires_at, endpoint_count)
      SELECT ${id}, 'registry://' || lower(${js}) || '/agents/' || ${id}, ${js}, 'active', 'Synthetic agent ' || g, 'org-' || g % 500, 1,
             'validated', 0, ${record}, '${at}', '${at}', 'none', g % 50, 1, null, 2
      FROM generate_series(0, ${count - 1}) g`);
    await client.query(`
      INSERT INTO agent_skills (skill, agent_id, discoverable, jurisdiction, trust_level, health_rank, best_priority, created_at, token_binding, features, protocols)
      SELECT DISTINCT 'skill.s' || s, ${id}, 1, ${js}, 0, 1, g % 50, '${at}', 'none',
             ' ' || case when g % 2 = 0 then 'idempotency_strict ' else '' end || case when g % 3 = 0 then 'stream_resume ' else '' end,
             case when g % 3 = 0 then ' mesh-a2a-jsonrpc ' else ' ' || ${protocol} || ' mesh-a2a-jsonrpc ' end
      FROM generate_series(0, ${count - 1}) g,
             unnest(array[g % ${SKILL_COUNT}, (g * 7 + 3) % ${SKILL_COUNT}]) s`);
    // The first version of each (migration 013), as the service writes it with the agent.
    await client.query('INSERT INTO agent_versions (agent_id, version, status, record, updated_at) SELECT id, version, status, record, updated_at FROM agents');
    // The protocols of its endpoints (migration 014): the one of its first endpoint, and mesh-a2a-jsonrpc.
    await client.query(`
      INSERT INTO agent_endpoints (protocol, agent_id)
      SELECT DISTINCT p, ${id} FROM generate_series(0, ${count - 1}) g, unnest(array[${protocol}, 'mesh-a2a-jsonrpc']) p`);
    // Statistics for the planner, and the visibility map and hint bits set now rather than by the
    // first reads under load (which would then measure PostgreSQL writing them).
    await client.query('VACUUM ANALYZE agents, agent_skills, agent_versions, agent_endpoints');
  } finally {
    await client.end();
  }
}
