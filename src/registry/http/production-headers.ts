import cors from '@fastify/cors';
import type { FastifyInstance } from 'fastify';
import type { Config } from '../../core/config.ts';

/**
 * CORS and HSTS (contract §9). In production only the origins listed in REGISTRY_CORS_ORIGINS may
 * call from a browser (none when unset), and HTTPS answers carry Strict-Transport-Security. In
 * development any origin may, so a local console or tool works without configuration.
 */
export async function registerProductionHeaders(app: FastifyInstance, config: Config): Promise<void> {
  const production = config.REGISTRY_ENV === 'production';
  const allowed = (config.REGISTRY_CORS_ORIGINS ?? '')
    .split(',')
    .map((origin) => origin.trim())
    .filter(Boolean);
  await app.register(cors, {
    origin: production ? allowed : true,
    methods: ['GET', 'HEAD', 'POST', 'PUT', 'DELETE'],
    allowedHeaders: ['authorization', 'content-type', 'dpop', 'if-match', 'x-api-key', 'x-idempotency-key', 'x-request-id', 'last-event-id'],
    exposedHeaders: ['etag', 'location', 'idempotent-replayed', 'retry-after', 'www-authenticate', 'x-request-id', 'dpop-nonce'],
    maxAge: 600,
    // An OPTIONS that is not a CORS preflight (no Origin) is answered 204 like any allowed method,
    // not with the plugin's plain-text 400 outside the envelope.
    strictPreflight: false,
  });
  if (production && config.REGISTRY_TLS_CERT_FILE) {
    app.addHook('onSend', async (_request, reply) => {
      reply.header('strict-transport-security', 'max-age=31536000; includeSubDomains');
    });
  }
}
