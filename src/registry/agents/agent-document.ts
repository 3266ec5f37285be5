import type { AgentDocument, Capabilities, Endpoint, Owner, TokenBinding, TrustMaterial } from '../../contract/agent-record.ts';

/** The writable fields as they arrive (validated by the route schema; defaults may be missing). */
export type AgentInput = {
  display_name: string;
  endpoints: Array<Omit<Endpoint, 'priority' | 'weight'> & { priority?: number; weight?: number }>;
  capabilities: Partial<Capabilities> & Record<string, unknown>;
  trust: Partial<TrustMaterial>;
  owner?: Owner;
  description?: string;
  policy_tags?: Record<string, unknown>;
};

const DEFAULT_PRIORITY = 100;
const DEFAULT_WEIGHT = 100;

const unique = (values: readonly string[] | undefined): string[] => [...new Set(values ?? [])];

/**
 * The stored document for an input, with the contract's defaults filled in (priority 100, weight 100,
 * token_binding none, empty trust arrays). `fallbackOwner` is kept when an update omits `owner`.
 */
export function toAgentDocument(input: AgentInput, fallbackOwner: Owner = {}): AgentDocument {
  const { protocols, skills, features, token_binding, ...flags } = input.capabilities;
  return {
    display_name: input.display_name,
    endpoints: input.endpoints.map((endpoint) => ({
      url: endpoint.url,
      protocol: endpoint.protocol,
      priority: endpoint.priority ?? DEFAULT_PRIORITY,
      weight: endpoint.weight ?? DEFAULT_WEIGHT,
      ...(endpoint.health_url ? { health_url: endpoint.health_url } : {}),
      ...(endpoint.region ? { region: endpoint.region } : {}),
    })),
    capabilities: {
      ...flags,
      protocols: unique(protocols),
      skills: unique(skills),
      features: unique(features),
      token_binding: (token_binding as TokenBinding | undefined) ?? 'none',
    },
    trust: {
      certificates: input.trust.certificates ?? [],
      signatures: input.trust.signatures ?? [],
      attestations: input.trust.attestations ?? [],
      ...(input.trust.jwks ? { jwks: input.trust.jwks } : {}),
    },
    owner: input.owner ?? fallbackOwner,
    description: input.description ?? null,
    policy_tags: input.policy_tags ?? {},
  };
}
