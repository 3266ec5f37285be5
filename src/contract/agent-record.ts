/**
 * The agent record as the registry returns it everywhere (spec: AgentRecord; contract §3), and the
 * document an agent's owner writes. Field names follow the spec, hence snake_case.
 */
export const AGENT_STATUSES = ['active', 'suspended', 'revoked', 'retired'] as const;
export type AgentStatus = (typeof AGENT_STATUSES)[number];

export const TOKEN_BINDINGS = ['none', 'mtls_cnf_x5t_s256', 'dpop'] as const;
export type TokenBinding = (typeof TOKEN_BINDINGS)[number];

export { PURPOSES_OF_USE, type PurposeOfUse } from '../core/vocabulary.ts';

export type Endpoint = {
  url: string;
  protocol: string;
  priority: number;
  weight: number;
  health_url?: string;
  region?: string;
};

export type EndpointHealth = {
  status: 'healthy' | 'unhealthy' | 'unknown';
  checked_at: string | null;
  latency_ms: number | null;
  /**
   * Why the last probe failed (`unreachable`, `timeout`, …); `no_health_url` for an endpoint that is
   * never probed because it has no `health_url`; null when healthy or not probed yet.
   */
  reason: string | null;
};

export type Capabilities = {
  protocols: string[];
  skills: string[];
  features: string[];
  token_binding: TokenBinding;
  fhir_r4?: boolean;
  consent_support?: boolean;
  stream_resume?: boolean;
  [flag: string]: unknown;
};

export type TrustMaterial = {
  certificates: string[];
  signatures: string[];
  attestations: string[];
  jwks?: { keys: Record<string, unknown>[] };
};

export type Owner = { org_id?: string; org_name?: string; operator?: string };

export type TrustValidation = {
  state: 'pending' | 'validated' | 'failed';
  level: number;
  checked_at: string | null;
  errors: Array<{ code: string; pointer: string; message: string }>;
  /** When the first valid certificate lapses; null without one (and for records not re-validated since). */
  expires_at?: string | null;
};

/** What the owner writes: the registration body without jurisdiction, after defaults. */
export type AgentDocument = {
  display_name: string;
  endpoints: Endpoint[];
  capabilities: Capabilities;
  trust: TrustMaterial;
  owner: Owner;
  description: string | null;
  policy_tags: Record<string, unknown>;
};

export type AgentRecord = Omit<AgentDocument, 'endpoints'> & {
  agent_id: string;
  jurisdiction: string;
  status: AgentStatus;
  status_reason: string | null;
  endpoints: Array<Endpoint & { health: EndpointHealth }>;
  version: number;
  trust_validation: TrustValidation;
  created_at: string;
  updated_at: string;
};
