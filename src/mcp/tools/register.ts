import { randomUUID } from 'node:crypto';
import { Type } from 'typebox';
import type { Static } from 'typebox';
import type { RegisterAgentBody } from '../../contract/schemas/agent-schemas.ts';
import { defineTool } from './ward-tool.ts';
import { DEFAULT_PROTOCOL, PROTOCOLS, StringEnum } from '../../contract/mcp-vocabulary.ts';

/** Arguments of `register`, exactly the spec's (Tool interface): four required, protocol default mesh-a2a-jsonrpc. */
export const RegisterArguments = Type.Object(
  {
    display_name: Type.String({ description: 'Human-readable name of the agent.' }),
    jurisdiction: Type.String({
      description: 'ISO 3166-1 alpha-2 country code the agent operates in, e.g. GB.',
    }),
    endpoint_url: Type.String({
      format: 'uri',
      description: "The agent's endpoint URL, e.g. https://agents.example.org/a2a.",
    }),
    capabilities: Type.Array(Type.String(), {
      description: 'Skills the agent offers, dotted lower-case identifiers such as consent.verify.',
    }),
    protocol: Type.Optional(
      StringEnum(PROTOCOLS, { default: DEFAULT_PROTOCOL, description: 'Protocol the endpoint speaks.' }),
    ),
    description: Type.Optional(Type.String({ description: 'What the agent does. No patient data.' })),
  },
  { additionalProperties: false },
);

/**
 * The registration body the flat arguments stand for: one endpoint speaking `protocol`, the
 * capabilities as `capabilities.skills` (what discovery matches, contract §3), and empty trust
 * material, which the registry validates at level 0 (self-asserted). The owner comes from the API key.
 */
export function registrationBody(args: {
  display_name: string;
  jurisdiction: string;
  endpoint_url: string;
  capabilities: string[];
  protocol?: string;
  description?: string;
}): Static<typeof RegisterAgentBody> {
  const protocol = args.protocol ?? DEFAULT_PROTOCOL;
  return {
    display_name: args.display_name,
    jurisdiction: args.jurisdiction,
    endpoints: [{ url: args.endpoint_url, protocol }],
    capabilities: { skills: args.capabilities, protocols: [protocol] },
    trust: { certificates: [], signatures: [], attestations: [] },
    ...(args.description === undefined ? {} : { description: args.description }),
  };
}

/** `register` → `POST /v1/agents` with an idempotency key of its own (spec: Tool interface, Register agent). */
export const registerTool = defineTool({
  name: 'register',
  title: 'Register an agent',
  description:
    'Register a health-care AI agent in the Ward registry with one endpoint and its capabilities (skills). Returns ' +
    'the new agent record as JSON, including its agent_id (registry://<jurisdiction>/agents/<id>) and ' +
    'trust_validation. The agent belongs to the organisation of the API key. Never put patient data in the arguments.',
  inputSchema: RegisterArguments,
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
  call: (args, registry, signal) => registry.registerAgent(registrationBody(args), { idempotencyKey: randomUUID(), signal }),
});
