/**
 * `GET /try/tasks/{id}/events`: a task's states, relayed from the gateway to the try page's script
 * (web/console.js) as they arrive. The browser talks to the console only and holds no mesh credential;
 * the console follows the task with the credential it was sent with (try-session.ts).
 *
 * The gateway's `tasks/resubscribe` replays a task's events from the first and ends with the first
 * turn that ended (a final status: completed, failed, canceled, or input-required). A task that was
 * answered has more turns after it, so the relay reads each stream's event ids and, when one ends,
 * asks the task's status: while it is not the last status streamed, it resumes after the last event
 * seen. Then one `task-end` tells the page not to reconnect. A task this session did not send, or a
 * stream the gateway would not open, is a `task-error` event saying why.
 */
import { Readable } from 'node:stream';
import type { ReadableStream } from 'node:stream/web';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { formatSseEvent } from '../../core/http/server-sent-events.ts';
import { endableRelay, sendEventStream, trackLiveStream } from '../access/live-streams.ts';
import type { ConsoleConfig } from '../console-config.ts';
import { getTask, openTaskStream, type MeshCredential } from './try-gateway.ts';
import { credentialOf, keptTask, type TryTask } from './try-session.ts';

/** Turns followed in one stream at most (a task answered again and again is followed anew on reload). */
const MAX_TURNS = 20;

const errorEvent = (message: string) => formatSseEvent({ retry: 600_000, event: 'task-error', data: JSON.stringify({ message }) });

/** What the relay learns from the gateway's events as they pass: the last event id and status. */
class StreamReading {
  lastSeq = 0;
  lastStatus = '';
  #buffer = '';

  read(chunk: Buffer | string): void {
    const lines = (this.#buffer + chunk.toString()).split('\n');
    this.#buffer = lines.pop() ?? '';
    for (const line of lines) {
      const id = /^id: ?(\d+)$/.exec(line);
      if (id) this.lastSeq = Number(id[1]);
      if (line.startsWith('data:')) this.#status(line.slice(5).trim());
    }
  }

  #status(data: string): void {
    try {
      const status = (JSON.parse(data) as { result?: { status?: { state?: unknown; timestamp?: unknown } } }).result?.status;
      if (status && typeof status.state === 'string') this.lastStatus = `${status.state}@${String(status.timestamp)}`;
    } catch {
      // Not a status update: nothing to learn from it.
    }
  }
}

async function* relayTurns(config: ConsoleConfig, task: TryTask, credential: MeshCredential, signal: AbortSignal): AsyncGenerator<Buffer | string> {
  const reading = new StreamReading();
  for (let turn = 0; turn < MAX_TURNS && !signal.aborted; turn += 1) {
    const opened = await openTaskStream(config.GATEWAY_URL, task.alias, credential, task.task_id, reading.lastSeq, config.CONSOLE_REGISTRY_TIMEOUT_MS, signal);
    if (!opened.ok) {
      yield errorEvent(opened.error.message);
      return;
    }
    const upstream = Readable.fromWeb(opened.response.body as ReadableStream<Uint8Array>);
    try {
      for await (const chunk of upstream) {
        reading.read(chunk as Buffer);
        yield chunk as Buffer;
      }
    } finally {
      upstream.destroy();
    }
    const now = await getTask(config.GATEWAY_URL, task.alias, credential, task.task_id, config.CONSOLE_REGISTRY_TIMEOUT_MS);
    if (!now.ok || `${now.result.status.state}@${String(now.result.status.timestamp)}` === reading.lastStatus) break;
  }
  yield formatSseEvent({ event: 'task-end', data: '{}' });
}

export async function followTask(request: FastifyRequest<{ Params: { taskId: string } }>, reply: FastifyReply, config: ConsoleConfig): Promise<FastifyReply> {
  const task = keptTask(request, request.params.taskId);
  if (!task) return sendEventStream(reply, errorEvent('This task was not sent from this session, so the console does not hold a credential to follow it.'));
  const credential = await credentialOf(task);
  if (!credential) return sendEventStream(reply, errorEvent('The mesh token this task was sent with is no longer usable.'));
  const closed = new AbortController();
  reply.raw.once('close', () => closed.abort());
  const relay = endableRelay(relayTurns(config, task, credential, closed.signal));
  const { body } = relay;
  body.on('error', () => body.destroy());
  const end = () => relay.end(errorEvent('This console session has ended (signed out, expired, or its credential is no longer accepted): sign in again to follow the task.'));
  const untrack = request.viewer.openAccess
    ? () => undefined
    : trackLiveStream(request.session.sessionId, { stop: () => reply.raw.destroy(), end, stillAccepted: request.credentialStillAccepted }, request.liveDeadline);
  reply.raw.once('close', () => {
    untrack();
    body.destroy();
  });
  return sendEventStream(reply, body);
}
