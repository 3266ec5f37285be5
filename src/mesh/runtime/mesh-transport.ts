/**
 * What the gateway and every agent set up the same way around JSON-RPC (contract §10), as the
 * `ward-mesh-transport` plugin: bodies kept raw (JSON-RPC answers bad JSON with -32700 itself, and
 * DID_VERIFY signs the bytes), WebSocket at the mesh's body limit, the framework's own failures as
 * JSON-RPC envelopes, and the request check decorated as `meshAuthenticate`.
 */
import websocket from '@fastify/websocket';
import fastifyPlugin from 'fastify-plugin';
import type { Clock } from '../../core/clock.ts';
import type { DidResolver } from './did/did-web.ts';
import { answerFrameworkErrorsAsJsonRpc } from './http-errors.ts';
import { createMeshRequestAuthenticator, type MeshRequestAuthenticator, type MeshRequestAuthSettings } from './request-authentication.ts';
import { closeSocketsForShutdown } from './streaming/websocket.ts';

declare module 'fastify' {
  interface FastifyInstance {
    /** The mesh's check of a request's credentials (and body signature), from the `ward-mesh-transport` plugin. */
    meshAuthenticate: MeshRequestAuthenticator;
  }
}

/** Contract §2's body limit, applied to mesh payloads too. */
export const MESH_BODY_LIMIT_BYTES = 1024 * 1024;

export type MeshTransportOptions = {
  readonly config: MeshRequestAuthSettings;
  readonly clock: Clock;
  readonly didResolver?: DidResolver | undefined;
  /** The message of the 404 envelope for a path no route serves. */
  readonly notFoundMessage: string;
};

/** The `ward-mesh-transport` plugin; register it before the routes. */
export const meshTransport = fastifyPlugin<MeshTransportOptions>(
  async (app, options) => {
    app.decorate('meshAuthenticate', createMeshRequestAuthenticator(options.config, options.clock, options.didResolver));
    app.removeAllContentTypeParsers();
    app.addContentTypeParser('*', { parseAs: 'buffer' }, (_request, body, done) => done(null, body));
    await app.register(websocket, { options: { maxPayload: MESH_BODY_LIMIT_BYTES }, preClose: closeSocketsForShutdown });
    answerFrameworkErrorsAsJsonRpc(app, options.notFoundMessage);
  },
  { name: 'ward-mesh-transport', fastify: '5.x' },
);
