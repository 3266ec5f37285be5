/**
 * `POST /v1/agents/from-card`: an agent registered from its A2A agent card (cards/card-registrations.ts;
 * docs/mesh.md, "Signed cards"). Write scope, as every agent write (auth/route-scopes.ts).
 */
import { AgentFromCardSchema, RegisterFromCardBody } from '../../../contract/schemas/agent-schemas.ts';
import { IdempotencyHeaders, errorResponses } from '../../../contract/schemas/common.ts';
import { sendOutcome, writeRequest } from '../../http/request-context.ts';
import { registryRoutePlugin } from '../../http/route-plugin.ts';

export const agentCardRoutes = registryRoutePlugin('ward-agent-card-routes', async (app) => {
  const { cards } = app.ward;
  const tags = ['agents'];

  app.post(
    '/v1/agents/from-card',
    {
      schema: {
        operationId: 'registerAgentFromCard',
        tags,
        summary: 'Register an agent from its A2A agent card',
        description:
          'Reads the A2A card at card_url (no private address in production, no redirect off its origin, REGISTRY_CARD_MAX_BYTES and ' +
          'REGISTRY_CARD_TIMEOUT_MS), requires its interface URLs on its origin, verifies its signature under REGISTRY_CARD_SIGNATURES ' +
          '(the key from the jku on its origin), and registers the record it maps to: name, skills, interfaces as endpoints, security ' +
          'schemes as features. The answer is the record and its source. Each refusal is 422 with a CARD_* code and writes nothing. ' +
          'The card is read again every REGISTRY_CARD_REREAD_INTERVAL_MS: a changed card updates the record, one that no longer ' +
          'verifies or is gone suspends the agent (docs/mesh.md, "Signed cards").',
        headers: IdempotencyHeaders,
        body: RegisterFromCardBody,
        response: { 201: AgentFromCardSchema, 200: AgentFromCardSchema, ...errorResponses(403, 409) },
      },
    },
    async (request, reply) => {
      // A caller that goes away ends the card read (and its key-set reads) at once: no fetching for no one.
      const gone = new AbortController();
      const onClose = () => {
        if (!reply.raw.writableFinished) gone.abort();
      };
      reply.raw.once('close', onClose);
      try {
        return sendOutcome(reply, await cards.registerOnce(writeRequest(request), request.body, gone.signal));
      } finally {
        reply.raw.off('close', onClose);
      }
    },
  );

});
