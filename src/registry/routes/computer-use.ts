import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { CONSOLE_PAGES, type ComputerUseService } from '../computer-use/computer-use-service.ts';
import { StringEnum, errorResponses } from '../schemas/common.ts';

export type ComputerUseRoutesOptions = { computerUse: ComputerUseService };

const ScreenshotQuery = Type.Object(
  {
    page: StringEnum(CONSOLE_PAGES, { description: 'One of the nine console pages' }),
    base_url: Type.Optional(Type.String({ format: 'uri', pattern: '^https?://', maxLength: 2048, description: "The console's address; default its own origin (CONSOLE_URL)" })),
  },
  { additionalProperties: false },
);

/**
 * Computer use, admin only (contract §12, docs/computer-use.md). `GET
 * /v1/admin/computer-use/screenshot` answers a PNG of one console page, taken in Debian's Chromium
 * signed in to the console with the caller's own credential, so the picture shows exactly what that
 * administrator would see.
 */
export const computerUseRoutes: FastifyPluginAsyncTypebox<ComputerUseRoutesOptions> = async (app, options) => {
  const { computerUse } = options;
  app.get(
    '/v1/admin/computer-use/screenshot',
    {
      schema: {
        tags: ['computer-use'],
        summary: 'A PNG of one console page (1280×800)',
        querystring: ScreenshotQuery,
        response: {
          200: { description: 'The page as PNG', content: { 'image/png': { schema: { type: 'string', format: 'binary' } } } },
          ...errorResponses(401, 403),
        },
      },
    },
    async (request, reply) => {
      const png = await computerUse.screenshot({ page: request.query.page, baseUrl: request.query.base_url, credential: presentedCredential(request) });
      // The schema describes the PNG as a binary string for OpenAPI; the bytes go out as they are.
      return reply.type('image/png').header('cache-control', 'no-store').send(png as unknown as string);
    },
  );
};

/** The API key or bearer token this request came with, to sign the browser in to the console as the same caller. */
function presentedCredential(request: FastifyRequest): string | undefined {
  const apiKey = request.headers['x-api-key'];
  if (typeof apiKey === 'string' && apiKey) return apiKey;
  const authorization = request.headers.authorization;
  const match = typeof authorization === 'string' ? /^Bearer\s+(\S+)$/i.exec(authorization) : null;
  return match?.[1];
}
