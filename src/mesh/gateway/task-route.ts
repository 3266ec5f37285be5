/**
 * The gateway's `GET /tasks`: the exchanges it is forwarding and the last ones it forwarded, with
 * their agent, method, task state and duration (task-log.ts) — counts, states and times, never a
 * message. Read by the console's mesh page. Answered to a caller on this machine's loopback
 * interface (not relayed by a proxy) or to an authenticated mesh caller; anyone else gets 403, as
 * which agents are busy, and how, tells an outsider about the work going on (docs/mesh.md).
 */
import type { FastifyInstance } from 'fastify';
import { isLoopback } from '../../core/http/loopback.ts';
import { failure } from '../runtime/jsonrpc.ts';
import { meshErrorObject } from '../runtime/mesh-errors.ts';
import type { TaskLog } from './task-log.ts';

/** Headers a proxy adds when it relays a request: any of them means it did not come straight from here. */
const RELAY_HEADERS = ['x-forwarded-for', 'forwarded', 'x-real-ip', 'x-forwarded-host', 'via'];

/** Whether the request comes straight from this machine (a relay header means a proxy relayed it). */
export function fromThisMachine(request: { headers: Record<string, unknown>; socket: { remoteAddress?: string | undefined } }): boolean {
  if (RELAY_HEADERS.some((name) => request.headers[name] !== undefined)) return false;
  const address = request.socket.remoteAddress ?? '';
  return isLoopback(address.startsWith('::ffff:') ? address.slice(7) : address);
}

/** Registers `GET /tasks` on the gateway app. */
export function registerTaskRoute(app: FastifyInstance, taskLog: TaskLog): void {
  app.get('/tasks', async (request, reply) => {
    if (!fromThisMachine(request)) {
      const authenticated = await app.meshAuthenticate(request.headers).then(
        () => true,
        () => false,
      );
      if (!authenticated) {
        return reply.code(403).type('application/json').send(failure(null, meshErrorObject('INVALID_REQUEST', 'The task log is served to loopback or authenticated mesh callers only', { reason: 'not_loopback' })));
      }
    }
    reply.header('cache-control', 'no-store');
    return taskLog.snapshot();
  });
}
