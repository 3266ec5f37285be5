import assert from 'node:assert/strict';
import { once } from 'node:events';
import { connect, type Socket } from 'node:net';
import { test } from 'node:test';
import Fastify from 'fastify';
import { trackUnusedConnections } from '../../../src/core/http/unused-connections.ts';

async function open(port: number): Promise<Socket> {
  const socket = connect(port, '127.0.0.1');
  await once(socket, 'connect');
  return socket;
}

test('closing destroys connections that never carried a request, and only those', { timeout: 30_000 }, async () => {
  const app = Fastify();
  app.get('/', async () => ({ ok: true }));
  const connections = trackUnusedConnections(app.server);
  app.addHook('preClose', async () => connections.destroyUnused());
  await app.listen({ port: 0, host: '127.0.0.1' });
  const { port } = app.server.address() as { port: number };

  const spare = await open(port);
  const used = await open(port);
  used.write('GET / HTTP/1.1\r\nhost: x\r\n\r\n');
  await once(used, 'data');

  const spareClosed = once(spare, 'close');
  // Before the fix, close() waited for the spare connection's timeout (over a minute).
  await app.close();
  await spareClosed;
  assert.equal(spare.destroyed, true);
  used.destroy();
});
