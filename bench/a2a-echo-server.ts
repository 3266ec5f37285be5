/**
 * The mesh bench's baseline: the `@a2a-js/sdk` reference stack (DefaultRequestHandler, in-memory task
 * store, its JSON-RPC transport handler) on bare node:http (express is not installed), with an echo
 * executor: the task, one artifact echoing the message's text, completed, all at once. Run as a child
 * process by bench/mesh.ts on BENCH_PORT (default: any); prints `listening on <url>` and serves until
 * killed. It answers any request (a GET gets a JSON-RPC parse error), which is how readiness is seen.
 *
 * BENCH_LOG_LEVEL=info logs each request as Fastify does in production (pino, an `incoming request`
 * and a `request completed` line); any other level logs nothing, as Ward at `warn`.
 */
import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import { TaskState, type Message } from '@a2a-js/sdk';
import {
  AgentEvent,
  DefaultRequestHandler,
  InMemoryTaskStore,
  JsonRpcTransportHandler,
  ServerCallContext,
  type AgentExecutor,
} from '@a2a-js/sdk/server';
import pino from 'pino';

const textOf = (message: Message): string =>
  message.parts.map((part) => (part.content?.$case === 'text' ? part.content.value : '')).join('');

const status = (state: TaskState) => ({ state, timestamp: new Date().toISOString(), message: undefined });

const echoExecutor: AgentExecutor = {
  execute: async (context, bus) => {
    const { taskId, contextId, userMessage } = context;
    bus.publish(
      AgentEvent.task({
        id: taskId,
        contextId,
        status: status(TaskState.TASK_STATE_SUBMITTED),
        artifacts: [],
        history: [userMessage],
        metadata: undefined,
      }),
    );
    bus.publish(
      AgentEvent.artifactUpdate({
        taskId,
        contextId,
        artifact: {
          artifactId: randomUUID(),
          name: 'echo',
          description: '',
          parts: [
            {
              content: { $case: 'text', value: textOf(userMessage) },
              metadata: undefined,
              filename: '',
              mediaType: 'text/plain',
            },
          ],
          metadata: undefined,
          extensions: [],
        },
        append: false,
        lastChunk: true,
        metadata: undefined,
      }),
    );
    bus.publish(
      AgentEvent.statusUpdate({
        taskId,
        contextId,
        status: status(TaskState.TASK_STATE_COMPLETED),
        metadata: undefined,
      }),
    );
    bus.finished();
  },
  cancelTask: async () => undefined,
};

const card = {
  name: 'bench echo',
  description: 'a2a-js echo agent (benchmarks only)',
  version: '1.0.0',
  supportedInterfaces: [
    { url: 'http://127.0.0.1/', protocolBinding: 'JSONRPC', tenant: '', protocolVersion: '1.0' },
  ],
  capabilities: { streaming: true, pushNotifications: false, extensions: [] },
  securitySchemes: {},
  securityRequirements: [],
  defaultInputModes: ['text/plain'],
  defaultOutputModes: ['text/plain'],
  skills: [],
  signatures: [],
};

const log = process.env.BENCH_LOG_LEVEL === 'info' ? pino({ level: 'info' }) : undefined;
let requests = 0;
const transport = new JsonRpcTransportHandler(
  new DefaultRequestHandler(card as never, new InMemoryTaskStore(), echoExecutor),
);
const server = createServer((request, response) => {
  const started = performance.now();
  const requestLog = log?.child({ reqId: `req-${(requests += 1).toString(36)}` });
  requestLog?.info({ req: { method: request.method, url: request.url } }, 'incoming request');
  if (requestLog)
    response.once('finish', () =>
      requestLog.info(
        { res: { statusCode: response.statusCode }, responseTime: performance.now() - started },
        'request completed',
      ),
    );
  const chunks: Buffer[] = [];
  request.on('data', (chunk: Buffer) => chunks.push(chunk));
  request.on('end', () => {
    transport.handle(Buffer.concat(chunks).toString('utf8'), new ServerCallContext()).then(
      (answer) => response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(answer)),
      () => response.writeHead(500).end(),
    );
  });
});
server.listen(Number(process.env.BENCH_PORT ?? 0), '127.0.0.1', () => {
  const address = server.address();
  console.log(`listening on http://127.0.0.1:${address && typeof address === 'object' ? address.port : 0}/`);
});
