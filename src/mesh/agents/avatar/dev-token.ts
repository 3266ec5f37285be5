/**
 * `GET /dev/token` (contract §10; docs/avatar.md, "Development tokens"): a short-lived mesh token for a
 * browser during development. Gone (404) as soon as `MESH_JWT_SECRET` is not the default, and refused
 * (403) to any caller not on the loopback interface, or arriving through a proxy.
 */
import type { FastifyInstance } from 'fastify';
import type { Clock } from '../../../core/clock.ts';
import { DEFAULT_MESH_JWT_SECRET } from '../../../core/config.ts';
import { agentDid, type MeshConfig } from '../../mesh-config.ts';
import { issueMeshToken } from '../../runtime/auth.ts';
import { failure } from '../../runtime/jsonrpc.ts';
import { meshErrorObject } from '../../runtime/mesh-errors.ts';

/** Lifetime of a development token, seconds (capped by MESH_JWT_MAX_TTL). */
export const DEV_TOKEN_TTL_SECONDS = 300;

/** The caller a development token speaks as. */
export const DEV_TOKEN_ALIAS = 'dev-browser';

/** 127.0.0.0/8, ::1, and IPv4-mapped loopback. */
export function isLoopbackAddress(address: string | undefined): boolean {
  if (address === undefined) return false;
  const v4 = address.startsWith('::ffff:') ? address.slice(7) : address;
  return address === '::1' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(v4);
}

/** Adds `GET /dev/token` to the agent's app (through the runtime's `routes` hook). */
export function registerDevTokenRoute(app: FastifyInstance, config: MeshConfig, clock: Clock): void {
  app.get('/dev/token', async (request, reply) => {
    // A real secret means a real deployment: the route then does not exist at all.
    if (config.MESH_JWT_SECRET !== DEFAULT_MESH_JWT_SECRET) return reply.callNotFound();
    // A forwarding header means a proxy relayed it, so the socket's loopback address proves nothing.
    const proxied = request.headers['x-forwarded-for'] !== undefined || request.headers.forwarded !== undefined;
    if (proxied || !isLoopbackAddress(request.socket.remoteAddress)) {
      return reply.code(403).type('application/json').send(failure(null, meshErrorObject('INVALID_REQUEST', 'Development tokens are only issued to loopback callers', { reason: 'not_loopback' })));
    }
    const sub = agentDid(config, DEV_TOKEN_ALIAS);
    const expiresIn = Math.min(DEV_TOKEN_TTL_SECONDS, config.MESH_JWT_MAX_TTL);
    reply.header('cache-control', 'no-store');
    return { token: await issueMeshToken({ secret: config.MESH_JWT_SECRET, sub, ttlSeconds: expiresIn, clock }), expires_in: expiresIn, sub };
  });
}
