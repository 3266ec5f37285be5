/**
 * The registry records of the shipped mesh agents (contract §3 register body), with endpoints at the
 * gateway (`<gateway>/rpc/<alias>/`, protocol `mesh-a2a-jsonrpc`, probed at `<gateway>/rpc/<alias>/health`). `ward start` registers these so the
 * spec's standard flow (discover → route → tasks/send) works on a fresh clone.
 */
import { AVATAR_AGENT_INFO } from './agents/avatar/avatar-info.ts';
import { CONSENT_AGENT_INFO } from './agents/consent/consent-info.ts';
import { TRIAGE_AGENT_INFO } from './agents/triage/triage-info.ts';
import { MESH_PROTOCOL } from './runtime/card.ts';
import type { AgentInfo } from './runtime/mesh-agent.ts';

/** The agents Ward ships, by alias (the manifest's entries). */
export const SHIPPED_AGENTS: readonly AgentInfo[] = [CONSENT_AGENT_INFO, TRIAGE_AGENT_INFO, AVATAR_AGENT_INFO];

export type RegistrationOptions = {
  /** The gateway's base URL, e.g. `http://127.0.0.1:8100`. */
  readonly gatewayUrl: string;
  /** ISO 3166-1 alpha-2 (default `GB`). */
  readonly jurisdiction?: string;
  readonly owner?: { org_id: string; org_name: string; operator: string };
  /** Restrict to these aliases (default: all shipped agents). */
  readonly aliases?: readonly string[];
};

/** One `POST /v1/agents` body per shipped agent. */
export function meshAgentRegistrations(options: RegistrationOptions) {
  const base = options.gatewayUrl.replace(/\/+$/, '');
  return SHIPPED_AGENTS.filter((info) => !options.aliases || options.aliases.includes(info.alias)).map((info) => ({
    display_name: info.name,
    jurisdiction: options.jurisdiction ?? 'GB',
    description: info.description,
    // The gateway's view of the agent: probed without starting it (docs/mesh.md, "Health").
    endpoints: [{ url: `${base}/rpc/${info.alias}/`, protocol: MESH_PROTOCOL, priority: 10, weight: 100, health_url: `${base}/rpc/${info.alias}/health` }],
    capabilities: {
      protocols: [MESH_PROTOCOL],
      skills: info.skills.map((skill) => skill.id),
      features: ['tasks', 'sse', 'websocket'],
      stream_resume: true,
      consent_support: info.consentSupport ?? false,
      fhir_r4: false,
    },
    trust: { certificates: [], signatures: [], attestations: [] },
    owner: options.owner ?? { org_id: 'ward-local', org_name: 'Ward (local development)', operator: 'ward@localhost' },
    policy_tags: { purpose_of_use: ['treatment'], mesh_alias: info.alias },
  }));
}
