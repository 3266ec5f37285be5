import { Type } from 'typebox';
import type { Static } from 'typebox';
import type { RouteBody } from '../../contract/schemas/discovery-schemas.ts';
import { defineTool } from './ward-tool.ts';
import { PURPOSES_OF_USE, StringEnum } from '../../contract/mcp-vocabulary.ts';

/** Arguments of `route`, exactly the spec's (Tool interface): target_agent_id required, a registry URI. */
export const RouteArguments = Type.Object(
  {
    target_agent_id: Type.String({
      pattern: '^registry://',
      description:
        'The agent URI to route to, registry://<jurisdiction>/agents/<id>, as discover_agents returns it in agent_id.',
    }),
    caller_jurisdiction: Type.Optional(
      Type.String({ description: "The caller's ISO 3166-1 alpha-2 country code, for cross-border policy." }),
    ),
    purpose_of_use: Type.Optional(
      StringEnum(PURPOSES_OF_USE, { description: 'Why the caller will contact the agent.' }),
    ),
  },
  { additionalProperties: false },
);

/** `route` → `POST /v1/route` (spec: Tool interface, Route; contract §4). */
export const routeTool = defineTool({
  name: 'route',
  title: 'Get routing advice',
  description:
    'Ask the Ward registry how to reach an agent: the selected endpoint (endpoint/url, protocol, region), failover ' +
    'alternatives, the trust bundle, constraints (phi_allowed, concurrency and rate hints) and the evidence chain, ' +
    'signed by the registry. Advice only: the registry does not proxy the call. Never put patient data in the arguments.',
  inputSchema: RouteArguments,
  annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: true },
  call(args, registry, signal) {
    const body: Static<typeof RouteBody> = { target: args.target_agent_id };
    if (args.caller_jurisdiction !== undefined) body.caller_jurisdiction = args.caller_jurisdiction;
    if (args.purpose_of_use !== undefined) body.purpose = { purpose_of_use: args.purpose_of_use };
    return registry.route(body, { signal });
  },
});
