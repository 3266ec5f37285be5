/**
 * What the try page keeps in the person's session: the tasks it sent (so their states can be
 * followed with the credential they were sent with) and the last tool call's result (shown once, on
 * the page the call redirects to).
 */
import type { FastifyRequest } from 'fastify';
import { developmentCredential, ownCredential, type MeshCredential } from './try-gateway.ts';
import type { McpAnswer, ToolResult } from './try-mcp.ts';

/** A task sent from the try page; `token` only when it was sent with the operator's own mesh token. */
export type TryTask = { task_id: string; alias: string; agent_id: string; sub: string; token?: string | undefined };

export type ToolOutcomeKept = { name: string; values: Record<string, string>; outcome: McpAnswer<ToolResult> };

declare module 'fastify' {
  interface Session {
    tryTasks?: TryTask[];
    tryTool?: ToolOutcomeKept;
  }
}

/** The session's record of a task it sent. */
export function keptTask(request: FastifyRequest, taskId: string | undefined): TryTask | undefined {
  return taskId ? (request.session.get('tryTasks') ?? []).find((kept) => kept.task_id === taskId) : undefined;
}

/** The last tool call's result, shown once (a live refresh does not use it up). */
export function takeToolOutcome(request: FastifyRequest): ToolOutcomeKept | undefined {
  if (request.headers['hx-request']) return undefined;
  const kept = request.session.get('tryTool');
  if (kept) request.session.set('tryTool', undefined);
  return kept;
}

/** The credential a kept task was sent with: the operator's own token, or a fresh development token. */
export async function credentialOf(task: TryTask): Promise<MeshCredential | undefined> {
  return task.token ? ownCredential(task.token) : developmentCredential();
}
