/**
 * What the page handlers share: reading a registry answer as a page would, the CSRF field of a form,
 * and a notice carried across the redirect that follows an action (post, redirect, get).
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { RegistryAnswer } from '../../client/registry-client.ts';
import { endRevokedSession } from '../access/access.ts';
import { html, type View } from '../views/html.ts';
import { Notice } from '../views/parts.ts';
import { sendPage, type PageOptions } from '../views/send-page.ts';

declare module 'fastify' {
  interface Session {
    notice?: string;
  }
}

export type Failure = Extract<RegistryAnswer, { ok: false }>;

/** The first failed answer, if any. */
export function firstFailure(...answers: RegistryAnswer[]): Failure | undefined {
  return answers.find((answer): answer is Failure => !answer.ok);
}

/**
 * Whether the registry refused the session's credential itself (401): the caller must then end the
 * session ({@link signInAgain}) rather than show the page.
 */
export function credentialRefused(request: FastifyRequest, ...answers: RegistryAnswer[]): boolean {
  return !request.viewer.openAccess && answers.some((answer) => !answer.ok && answer.status === 401);
}

export const signInAgain = endRevokedSession;

/** The status a page answers with when the data it exists to show could not be had. */
export function failureStatus(failure: Failure): number {
  if (failure.status === null) return 503;
  return failure.status >= 400 ? failure.status : 502;
}

/** The status of a page built from these answers: 200, or what the first failed one makes it ({@link failureStatus}). */
export function pageStatus(...answers: RegistryAnswer[]): number {
  const failed = firstFailure(...answers);
  return failed ? failureStatus(failed) : 200;
}

/** The hidden field every form carries (checked by @fastify/csrf-protection before a POST handler runs, once the body is parsed). */
export function CsrfField({ reply }: { reply: FastifyReply }): View {
  return html`<input type="hidden" name="_csrf" value=${reply.generateCsrf()} />`;
}

/** Keeps a notice for the next page this session opens (after the redirect an action ends with). */
export function keepNotice(request: FastifyRequest, text: string): void {
  request.session.set('notice', text);
}

/** The notice kept by the last action, shown once. */
export function takeNotice(request: FastifyRequest): View {
  // A live refresh (perhaps of another tab) must not use up the notice meant for the page the action led to.
  if (request.headers['hx-request']) return null;
  const text = request.session.get('notice');
  if (!text) return null;
  request.session.set('notice', undefined);
  return html`<${Notice} kind="success">${text}<//>`;
}

/** A page an action may redirect to: the notice the action kept ({@link keepNotice}) comes first. */
export function sendPageWithNotice(request: FastifyRequest, reply: FastifyReply, options: PageOptions, content: View): FastifyReply {
  return sendPage(request, reply, options, html`${takeNotice(request)}${content}`);
}

/** The URL of this page as the browser asked for it: live sections fetch it again. */
export function selfUrl(request: FastifyRequest): string {
  return request.url;
}

/** A query value as one trimmed string, or undefined when empty. */
export function text(value: unknown): string | undefined {
  const first = Array.isArray(value) ? value[0] : value;
  if (typeof first !== 'string') return undefined;
  const trimmed = first.trim();
  return trimmed === '' ? undefined : trimmed;
}
