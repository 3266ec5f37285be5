import { createServer } from 'node:net';

/**
 * A loopback port that was free a moment ago: for a process that must be told its port in advance
 * (HAProxy's configuration, a child that logs nothing to find it by), or for a port nothing listens
 * on. Another process could take it in between; callers that can, listen on port 0 instead.
 */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}
