import type { Server } from 'node:http';
import type { Socket } from 'node:net';

/**
 * Connections a client opened but never sent a request on (HTTP clients such as undici open spare
 * ones). Node's `server.close()` waits for them until their timeout, so a graceful shutdown would
 * hang for over a minute whenever a pooling client (the console, say) was connected. Nothing is in
 * flight on them: they are safe to destroy when closing.
 */
export function trackUnusedConnections(server: Server): { destroyUnused(): void } {
  const unused = new Set<Socket>();
  // Over TLS a request's socket is the TLS socket, announced by 'secureConnection'.
  const event = typeof (server as { setSecureContext?: unknown }).setSecureContext === 'function' ? 'secureConnection' : 'connection';
  server.on(event, (socket: Socket) => {
    unused.add(socket);
    socket.once('close', () => unused.delete(socket));
  });
  server.on('request', (request: { socket: Socket }) => unused.delete(request.socket));
  return {
    destroyUnused() {
      for (const socket of unused) socket.destroy();
      unused.clear();
    },
  };
}
