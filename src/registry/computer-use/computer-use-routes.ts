import { registryRoutePlugin } from '../http/route-plugin.ts';
import type { FastifyRequest } from 'fastify';
import type { ComputerUseService } from './computer-use-service.ts';
import type { RunRequester } from './computer-use-runs.ts';
import { sendOutcome, writeRequest } from '../http/request-context.ts';
import { errorResponses, IdempotencyHeaders } from '../../contract/schemas/common.ts';
import {
  AcceptedRunSchema,
  CreateRunBody,
  ListRunsQuery,
  RunListSchema,
  RunSchema,
  ScreenshotParams,
  ScreenshotQuery,
  SessionIdParams,
} from '../../contract/schemas/computer-use-schemas.ts';

export type ComputerUseRoutesOptions = { computerUse: ComputerUseService };

const Png = { description: 'PNG, 1280×800', content: { 'image/png': { schema: { type: 'string', format: 'binary' } } } };

/**
 * Computer use, admin only (contract §12, docs/computer-use.md): model-driven runs against the console,
 * and a screenshot of one console page. The browser signs in to the console with the caller's own
 * credential, so it sees exactly what that administrator may see.
 */
export const computerUseRoutes = registryRoutePlugin<ComputerUseRoutesOptions>('ward-computer-use-routes', async (app, options) => {
  const { computerUse } = options;
  const tags = ['computer-use'];

  app.post(
    '/v1/admin/computer-use/runs',
    {
      schema: {
        tags,
        operationId: 'startComputerUseRun',
        summary: 'Start a run: the model carries out the task in the console, turn by turn',
        description: 'Queues a computer-use run: the model carries out the task in the console in a browser signed in as the caller, turn by turn (docs/computer-use.md).',
        headers: IdempotencyHeaders,
        body: CreateRunBody,
        response: { 202: AcceptedRunSchema, 200: AcceptedRunSchema, ...errorResponses(401, 403, 409) },
      },
    },
    async (request, reply) => {
      return sendOutcome(reply, await computerUse.requestRun(writeRequest(request), request.body, requesterOf(request)));
    },
  );

  app.get(
    '/v1/admin/computer-use/runs',
    { schema: { tags, operationId: 'listComputerUseRuns',
        summary: 'Runs, newest first',
        description: 'Computer-use runs, newest first, optionally of one status, in pages.', querystring: ListRunsQuery, response: { 200: RunListSchema, ...errorResponses(401, 403) } } },
    async (request) => computerUse.runs.list({ cursor: request.query.cursor, limit: request.query.limit ?? 20, status: request.query.status }),
  );

  app.get(
    '/v1/admin/computer-use/runs/:session_id',
    {
      schema: {
        tags,
        operationId: 'getComputerUseRun',
        summary: 'One run: status, each turn with its actions and screenshot digest, the final answer, and its ledger entries',
        description: 'One computer-use run: its status, each turn with its actions and screenshot digest, the final answer, and the ledger entries that record it.',
        params: SessionIdParams,
        response: { 200: RunSchema, ...errorResponses(401, 403, 404) },
      },
    },
    async (request) => computerUse.runs.get(request.params.session_id),
  );

  app.post(
    '/v1/admin/computer-use/runs/:session_id/cancel',
    {
      schema: {
        tags,
        operationId: 'cancelComputerUseRun',
        summary: 'Cancel a queued or running run (it stops within its turn); 409 once it has ended',
        description: 'Cancels a queued or running run; it stops within its current turn. A run that has ended is 409.',
        headers: IdempotencyHeaders,
        params: SessionIdParams,
        response: { 200: RunSchema, ...errorResponses(401, 403, 404, 409) },
      },
    },
    async (request, reply) => {
      return sendOutcome(reply, await computerUse.cancelRun(writeRequest(request), request.params.session_id));
    },
  );

  app.get(
    '/v1/admin/computer-use/runs/:session_id/screenshots/:turn',
    {
      schema: {
        tags,
        operationId: 'getComputerUseScreenshot',
        summary: "The screenshot a turn ended on (turn 0: the page as the run opened it)",
        description: 'The PNG screenshot a turn ended on; turn 0 is the page as the run opened it.',
        params: ScreenshotParams,
        response: { 200: Png, ...errorResponses(401, 403, 404) },
      },
    },
    async (request, reply) => {
      const png = await computerUse.runs.screenshot(request.params.session_id, request.params.turn);
      return reply.type('image/png').header('cache-control', 'no-store').send(png as unknown as string);
    },
  );

  app.get(
    '/v1/admin/computer-use/screenshot',
    {
      schema: {
        tags,
        operationId: 'captureConsolePage',
        summary: 'A PNG of one console page (1280×800)',
        description: 'Opens one console page in a browser signed in as the caller and answers a 1280×800 PNG of it.',
        querystring: ScreenshotQuery,
        response: { 200: Png, ...errorResponses(401, 403) },
      },
    },
    async (request, reply) => {
      const png = await computerUse.screenshot({ page: request.query.page, baseUrl: request.query.base_url, credential: presentedCredential(request) });
      // The schema describes the PNG as a binary string for OpenAPI; the bytes go out as they are.
      return reply.type('image/png').header('cache-control', 'no-store').send(png as unknown as string);
    },
  );
});

/** Who asked for a run: the run mints its own credential from this, and keeps none of theirs. */
function requesterOf(request: FastifyRequest): RunRequester {
  const { principal, scopes, pricingTier } = request.caller;
  return { kind: principal.kind, credentialId: principal.credentialId, orgId: principal.orgId, scopes: [...scopes], tier: pricingTier?.name };
}

/** The API key or bearer token this request came with, to sign the browser in to the console as the same caller. */
function presentedCredential(request: FastifyRequest): string | undefined {
  const apiKey = request.headers['x-api-key'];
  if (typeof apiKey === 'string' && apiKey) return apiKey;
  const authorization = request.headers.authorization;
  const match = typeof authorization === 'string' ? /^Bearer\s+(\S+)$/i.exec(authorization) : null;
  return match?.[1];
}
