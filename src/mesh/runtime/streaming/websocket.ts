/**
 * The WebSocket binding at `GET /ws` (contract §10): each text frame is a JSON-RPC payload (single or
 * batch) answered on the same socket. Streaming methods answer `{subscribed: true}` and then push each
 * update as a `tasks/status` notification; tasks sent over the socket are watched the same way. The
 * connection was authenticated at the upgrade and closes when that token expires.
 */
import type { FastifyInstance } from 'fastify';
import type { WebSocket } from 'ws';
import { dispatch, parsePayload, type JsonRpcNotification, type JsonRpcResponse, type RpcMethods, type RpcStreamItem } from '../jsonrpc.ts';
import type { RuntimeCallContext } from '../tasks/task-methods.ts';

/** Close code sent when the connection's token expires (4000–4999: application defined). */
export const TOKEN_EXPIRED_CLOSE_CODE = 4001;

/** Close code sent to open sockets when the server stops (RFC 6455 registry: 1012 Service Restart). */
export const SHUTDOWN_CLOSE_CODE = 1012;

/**
 * @fastify/websocket's `preClose`: open sockets are closed with 1012 and a reason saying to reconnect
 * (the plugin's default closes them without a code, which a client cannot tell from a crash), so a
 * client reconnects, to another instance behind a balancer, and resubscribes to its tasks.
 */
export function closeSocketsForShutdown(this: FastifyInstance, done: () => void): void {
  for (const client of this.websocketServer.clients) client.close(SHUTDOWN_CLOSE_CODE, 'server shutting down; reconnect');
  this.websocketServer.close();
  done();
}

export type MeshSocketOptions = {
  readonly methods: RpcMethods<RuntimeCallContext>;
  /** A call context for one message; `signal` aborts when the socket closes. */
  readonly contextFor: (signal: AbortSignal) => RuntimeCallContext;
  /** The updates of a task the socket sent, from its current status on. */
  readonly watch?: (taskId: string, context: RuntimeCallContext) => AsyncIterable<RpcStreamItem>;
  readonly onInternalError: (error: unknown) => void;
  /** Milliseconds since the epoch at which the connection's token expires. */
  readonly expiresAt: number;
  readonly now: () => number;
};

export function serveMeshSocket(socket: WebSocket, options: MeshSocketOptions): void {
  const closed = new AbortController();
  const watched = new Set<string>();
  const send = (message: JsonRpcResponse | JsonRpcResponse[] | JsonRpcNotification) => {
    if (socket.readyState === socket.OPEN) socket.send(JSON.stringify(message));
  };
  const push = async (items: AsyncIterable<RpcStreamItem>) => {
    try {
      for await (const item of items) {
        send({ jsonrpc: '2.0', method: 'tasks/status', params: { ...(item.result as object), event_id: item.eventId ?? null } });
      }
    } catch (error) {
      options.onInternalError(error);
    }
  };
  const watchTasks = (responses: readonly JsonRpcResponse[], methodOf: (index: number) => string | undefined) => {
    responses.forEach((response, index) => {
      const taskId = 'result' in response ? (response.result as { task_id?: unknown } | null)?.task_id : undefined;
      if (!options.watch || methodOf(index) !== 'tasks/send' || typeof taskId !== 'string' || watched.has(taskId)) return;
      watched.add(taskId);
      void push(options.watch(taskId, options.contextFor(closed.signal))).finally(() => watched.delete(taskId));
    });
  };

  const expiry = setTimeout(() => socket.close(TOKEN_EXPIRED_CLOSE_CODE, 'token expired'), Math.max(0, options.expiresAt - options.now()));
  expiry.unref();
  socket.on('close', () => {
    clearTimeout(expiry);
    closed.abort();
  });
  socket.on('message', (data) => {
    void (async () => {
      const parsed = parsePayload(Array.isArray(data) ? Buffer.concat(data).toString('utf8') : data.toString());
      const outcome = await dispatch(parsed, options.methods, options.contextFor(closed.signal), {
        onInternalError: (error) => options.onInternalError(error),
      });
      if (outcome.kind === 'stream') {
        send({ jsonrpc: '2.0', id: outcome.id, result: { subscribed: true } });
        await push(outcome.items);
        return;
      }
      if (outcome.body === undefined) return;
      send(outcome.body);
      const answers = Array.isArray(outcome.body) ? outcome.body : [outcome.body];
      const requests = parsed.kind === 'batch' ? parsed.entries : parsed.kind === 'single' ? [parsed.entry] : [];
      const answered = requests.filter((entry) => !entry.valid || !entry.notification);
      watchTasks(answers, (index) => {
        const entry = answered[index];
        return entry?.valid ? entry.request.method : undefined;
      });
    })().catch(options.onInternalError);
  });
}
