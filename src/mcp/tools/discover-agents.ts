import { Type } from 'typebox';
import { defineTool } from './ward-tool.ts';
import { PROTOCOLS, PURPOSES_OF_USE, StringEnum } from '../../contract/mcp-vocabulary.ts';
import { PROTOCOL_ALIASES } from '../../core/vocabulary.ts';

/** The spec's protocols, then the documented aliases the registry accepts (vocabulary.ts): `a2a-jsonrpc` finds agents registered from A2A cards. */
const DISCOVERABLE_PROTOCOLS = [...PROTOCOLS, ...Object.keys(PROTOCOL_ALIASES)] as const;

/** Arguments of `discover_agents`, exactly the spec's (Tool interface): capability required, limit 1–100 default 20. */
export const DiscoverAgentsArguments = Type.Object(
  {
    capability: Type.String({
      description:
        'The skill wanted, a dotted lower-case identifier such as consent.verify or triage.assess.',
    }),
    jurisdiction: Type.Optional(
      Type.String({ description: 'ISO 3166-1 alpha-2 country code of the agents wanted, e.g. GB.' }),
    ),
    protocol: Type.Optional(
      StringEnum(DISCOVERABLE_PROTOCOLS, {
        description: 'Only agents that speak this protocol. a2a-jsonrpc: any A2A JSON-RPC endpoint, those registered from A2A cards and the mesh\'s.',
      }),
    ),
    purpose_of_use: Type.Optional(
      StringEnum(PURPOSES_OF_USE, { description: 'Only agents whose policy allows this purpose of use.' }),
    ),
    limit: Type.Optional(
      Type.Integer({ minimum: 1, maximum: 100, default: 20, description: 'Most results to return.' }),
    ),
  },
  { additionalProperties: false },
);

/** `discover_agents` → `GET /v1/discover` (spec: Tool interface, Discover). */
export const discoverAgentsTool = defineTool({
  name: 'discover_agents',
  title: 'Discover agents',
  description:
    'Find trusted health-care AI agents in the Ward registry by capability, ranked by trust level, endpoint health, ' +
    'jurisdiction and priority. Returns the registry discovery response as JSON: query, results (agent records with ' +
    'agent_id, endpoints, score and score_breakdown), result_count and, when the registry signs, signed_response. ' +
    'Use an agent_id from the results with the route tool. Never put patient data in the arguments.',
  inputSchema: DiscoverAgentsArguments,
  annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: true },
  call: (args, registry, signal) => registry.discover(args, { signal }),
});
