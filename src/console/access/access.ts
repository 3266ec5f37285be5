/**
 * Who may use the console, and as whom it calls the registry (docs/console.md, "Access").
 *
 * In development (`REGISTRY_AUTH_MODE=disabled`, loopback bind) every page opens without sign-in and
 * says so in a banner. Otherwise a person signs in with an API key holding `registry:admin` (or, in
 * `jwt` mode, an access token): the console asks the registry who that credential is (`GET
 * /v1/caller`) and keeps it in a server-side session behind an HttpOnly, SameSite=Strict cookie. The
 * credential never reaches the browser again, and every registry call of the session is made with it,
 * so the registry's own scopes, limits, PHI guard and ledger apply to what the console does.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fastifyPlugin from 'fastify-plugin';
import type { RegistryClient } from '../../client/registry-client.ts';
import type { Clock } from '../../core/clock.ts';
import { errorEnvelope } from '../../core/errors.ts';
import { isLoopback } from '../../core/http/loopback.ts';
import type { ConsoleConfig } from '../console-config.ts';
import { html } from '../views/html.ts';
import type { Viewer } from '../views/layout.ts';
import { Problem } from '../views/parts.ts';
import { sendPage } from '../views/send-page.ts';
import { closeLiveStreams, sendEventStream, sendStreamEnd } from './live-streams.ts';
import { formatSseEvent } from '../../core/http/server-sent-events.ts';
import { createCredentialChecks, READ_VERDICT_MAX_AGE_MS, type CredentialChecks } from './credential-check.ts';
import { CONSOLE_PERSONA_HEADER, personaMayAct } from '../../contract/personas.ts';

declare module 'fastify' {
  interface Session {
    credential?: string;
    viewer?: Viewer;
    signedInAt?: number;
    seenAt?: number;
    /** Why the last signed-in session ended (expired, revoked), told on the next sign-in page. */
    ended?: string;
    /** The computer-use persona the session was signed in as, bound to it for its whole life. */
    persona?: string;
  }
  interface FastifyRequest {
    /** The registry client acting as this request's viewer. */
    registry: RegistryClient;
    viewer: Viewer;
    /** When this session ends unless the person acts (ms); an event stream stops then. */
    liveDeadline: number | undefined;
    /**
     * For a stream this request holds open: whether the registry still accepts the session's
     * credential (asked at most every few seconds); undefined in open access.
     */
    credentialStillAccepted: (() => Promise<boolean>) | undefined;
  }
}

const ADMIN_SCOPE = 'registry:admin';
const ALL_SCOPES = ['registry:read', 'registry:write', 'registry:admin'];

/** Why the sign-in page is shown, as a person reads it. */
const REASONS: Record<string, string> = {
  expired: 'Your session expired. Sign in again to go on.',
  revoked: 'The registry no longer accepts the credential this session used. Sign in with a current one.',
  signed_out: 'You are signed out.',
};

/** Paths that open without a session. */
const PUBLIC_PATHS = new Set(['/sign-in', '/livez', '/readyz', '/metrics']);
/** What a read-only persona may still post: its own way in and out. */
const READ_ONLY_POSTS = new Set(['/sign-in', '/sign-out']);
/** GETs that act as a POST does: the try page's relay of a task's stream, which follows the mesh with the session's tokens. */
const ACTING_READS = /^\/try\/tasks\/[^/]+\/events$/;

/**
 * Access, in the order a request meets it: another site's requests refused, the viewer admitted (or
 * sent to sign in), a read-only persona's changes refused, the CSRF check; then the sign-in routes.
 */
export function registerAccess(app: FastifyInstance, deps: ConsoleAccessOptions): void {
  app.decorateRequest('registry', null as unknown as RegistryClient);
  app.decorateRequest('viewer', null as unknown as Viewer);
  app.decorateRequest('liveDeadline', undefined);
  app.decorateRequest('credentialStillAccepted', undefined);
  const checks = createCredentialChecks({ registry: deps.registry, clock: deps.clock });
  refuseForeignRequests(app, deps.config);
  app.addHook('preHandler', async (request, reply) => admitViewer(request, reply, deps, checks));
  app.addHook('preHandler', refuseReadOnlyChange);
  // Every form, on every page, carries the session's CSRF token; no POST handler runs without it.
  app.addHook('preHandler', (request, reply, done) => {
    if (request.method === 'GET' || request.method === 'HEAD') return done();
    app.csrfProtection(request, reply, done);
  });
  registerSignIn(app, deps, checks);
}

/** Requests refused before anything else: another site's page through a rebound name, or its form. */
function refuseForeignRequests(app: FastifyInstance, config: ConsoleConfig): void {
  // Open access trusts "this machine": a page of another site that got a loopback address for its own
  // name (DNS rebinding) arrives with that name as Host, and is refused.
  const allowedHosts = new Set(config.allowedOrigins.map((origin) => new URL(origin).host));
  app.addHook('onRequest', async (request, reply) => {
    if (!config.openAccess) return;
    const host = request.headers.host ?? '';
    const hostname = host.replace(/:\d+$/, '');
    if (isLoopback(hostname) || allowedHosts.has(host)) return;
    return sendPage(request, reply, { title: 'Refused', status: 403 }, html`<p role="alert">This console answers on this machine's own addresses only.</p>`);
  });

  // A form posted from another origin is refused before its CSRF token is even looked at.
  app.addHook('onRequest', async (request, reply) => {
    if (request.method === 'GET' || request.method === 'HEAD') return;
    const origin = request.headers.origin;
    if (origin === undefined) return;
    const own = `${request.protocol}://${request.headers.host ?? ''}`;
    if (origin !== own && !config.allowedOrigins.includes(origin)) {
      return sendPage(request, reply, { title: 'Refused', status: 403 }, html`<p role="alert">This form was sent from another site (${origin}) and was refused.</p>`);
    }
  });
}

/**
 * Who this request acts as: in open access the development viewer; otherwise the session's, while
 * the session is alive (else the sign-in form), with a registry client holding its credential.
 */
async function admitViewer(request: FastifyRequest, reply: FastifyReply, { config, registry, clock }: ConsoleAccessOptions, checks: CredentialChecks): Promise<FastifyReply | undefined> {
  const path = request.url.split('?')[0] ?? '/';
  if (path.startsWith('/static/') || PUBLIC_PATHS.has(path)) return;
  if (config.openAccess) {
    request.registry = registry;
    const persona = personaOf(request);
    request.viewer = { label: 'Development (no sign-in)', scopes: ALL_SCOPES, openAccess: true, ...(persona ? { persona: { name: persona, mayAct: personaMayAct(persona) } } : {}) };
    return;
  }
  const idleMs = config.CONSOLE_SESSION_IDLE_MINUTES * 60_000;
  const maxMs = config.CONSOLE_SESSION_MAX_HOURS * 3_600_000;
  const { credential, viewer, signedInAt, seenAt } = request.session;
  if (!credential || !viewer || signedInAt === undefined || seenAt === undefined) return toSignIn(request, reply, request.session.get('ended'));
  const now = clock.now().getTime();
  if (now - seenAt > idleMs || now - signedInAt > maxMs) return endSession(request, reply, 'expired');
  // The registry's word on the credential: asked now for what acts, at most a few seconds old for a
  // read (credential-check.ts). Signing out needs none: it works even when the registry does not answer.
  const session = { id: request.session.sessionId, credential, credentialId: viewer.credentialId };
  if (path !== '/sign-out') {
    const acting = (request.method !== 'GET' && request.method !== 'HEAD') || ACTING_READS.test(path);
    const verdict = await checks.verdict(session, acting ? 0 : READ_VERDICT_MAX_AGE_MS);
    if (verdict.kind === 'refused') return endSession(request, reply, 'revoked');
    if (verdict.kind === 'unconfirmed') return credentialUnconfirmed(request, reply, verdict.answer, acting);
  }
  request.credentialStillAccepted = async () => (await checks.verdict(session, READ_VERDICT_MAX_AGE_MS)).kind !== 'refused';
  // Only what a person does keeps a session alive: not the event stream, nor the refreshes it
  // triggers, or an unattended tab would stay signed in until the session's maximum age.
  if (!isBackground(request, path)) request.session.set('seenAt', now);
  request.liveDeadline = Math.min(seenAt + idleMs, signedInAt + maxMs);
  request.registry = registry.as(credential);
  const persona = personaOf(request);
  request.viewer = persona ? { ...viewer, persona: { name: persona, mayAct: personaMayAct(persona) } } : viewer;
}

/**
 * A computer-use browser names its persona on every request (docs/computer-use.md); a read-only one
 * changes nothing, whatever its credential could do. A header can only take rights away: a person's
 * browser that sends none keeps all of theirs.
 */
async function refuseReadOnlyChange(request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply | undefined> {
  const persona = personaOf(request);
  if (persona === undefined || personaMayAct(persona) || request.method === 'GET' || request.method === 'HEAD') return;
  const path = request.url.split('?')[0] ?? '/';
  if (READ_ONLY_POSTS.has(path)) return;
  request.log.info({ persona, path }, 'console change refused: read-only persona');
  return sendPage(
    request,
    reply,
    { title: 'Read-only session', status: 403 },
    html`<p role="alert">This session acts as the computer-use persona <strong>${persona}</strong>, which is read-only: nothing was changed.</p>
      <p><a href="/dashboard">Back to the dashboard</a></p>`,
  );
}

/**
 * The registry could not say whether it still accepts the session's credential (it is unreachable,
 * failing or limiting the key): nothing is done or shown on a credential that may be revoked, and the
 * person is told why, as a page that failed on that answer would (the session stays).
 */
function credentialUnconfirmed(request: FastifyRequest, reply: FastifyReply, answer: Parameters<typeof Problem>[0] & { status: number | null }, acting: boolean): FastifyReply {
  const status = answer.status === null ? 503 : answer.status >= 400 ? answer.status : 502;
  if (request.url.startsWith('/live')) return sendStreamEnd(reply, status, answer.envelope);
  if (ACTING_READS.test(request.url.split('?')[0] ?? '')) return sendTaskError(reply, 'The console could not confirm with the registry that your credential is still accepted; the task is not followed until it can.');
  return sendPage(
    request,
    reply,
    { title: 'Registry not confirmed', status },
    html`<p>The console checks with the registry that your credential is still accepted before it ${acting ? 'acts' : 'shows a page'}, and could not: ${acting ? 'nothing was done.' : 'nothing is shown until it can.'}</p>
      <${Problem} ...${answer} />`,
  );
}

/** A task relay's one event saying why it does not follow the task (web/console.js shows it and stops). */
function sendTaskError(reply: FastifyReply, message: string): FastifyReply {
  return sendEventStream(reply, formatSseEvent({ retry: 600_000, event: 'task-error', data: JSON.stringify({ message }) }));
}

/** The sign-in form, signing in (the credential checked with the registry) and signing out. */
function registerSignIn(app: FastifyInstance, { config, registry, clock }: ConsoleAccessOptions, checks: CredentialChecks): void {
  app.get<{ Querystring: { next?: string; reason?: string } }>('/sign-in', async (request, reply) => {
    if (config.openAccess) return reply.redirect('/dashboard', 303);
    return signInPage(request, reply, { next: safeNext(request.query.next), notice: REASONS[request.query.reason ?? ''] });
  });

  app.post<{ Body: { credential?: string; next?: string } }>('/sign-in', async (request, reply) => {
    if (config.openAccess) return reply.redirect('/dashboard', 303);
    const next = safeNext(request.body?.next);
    const credential = (request.body?.credential ?? '').trim();
    if (!credential) return signInPage(request, reply, { next, error: 'Enter an API key or an access token.', status: 422 });
    const answer = await registry.as(credential).caller();
    if (!answer.ok) {
      if (answer.status === 401) return signInPage(request, reply, { next, error: 'The registry did not accept this credential: it is unknown, expired or revoked.', status: 401 });
      return signInPage(request, reply, { next, problem: answer, status: answer.status === null ? 503 : answer.status });
    }
    const caller = answer.body;
    if (!caller.scopes.includes(ADMIN_SCOPE)) {
      return signInPage(request, reply, {
        next,
        error: `This credential is valid but holds ${caller.scopes.join(', ') || 'no scope'}; the console needs ${ADMIN_SCOPE}.`,
        status: 403,
      });
    }
    // A new session id at sign-in, so an id planted before it (session fixation) is worth nothing.
    await request.session.regenerate();
    const now = clock.now().getTime();
    request.session.set('credential', credential);
    request.session.set('viewer', {
      label: `${caller.kind === 'api_key' ? 'Key' : 'Token'} ${caller.credential_id}${caller.org_id ? ` · ${caller.org_id}` : ''}`,
      scopes: caller.scopes,
      openAccess: false,
      credentialId: caller.credential_id,
    });
    request.session.set('signedInAt', now);
    request.session.set('seenAt', now);
    checks.accepted(request.session.sessionId);
    const persona = personaHeader(request);
    if (persona !== undefined) request.session.set('persona', persona);
    request.log.info({ credential_id: caller.credential_id, persona }, 'console sign-in');
    return reply.redirect(next, 303);
  });

  app.post('/sign-out', async (request, reply) => {
    closeLiveStreams(request.session.sessionId);
    await request.session.destroy();
    return reply.redirect('/sign-in?reason=signed_out', 303);
  });
}

/** The persona a request's header names (any value; unknown ones are read-only). */
function personaHeader(request: FastifyRequest): string | undefined {
  const value = request.headers[CONSOLE_PERSONA_HEADER];
  const persona = Array.isArray(value) ? value[0] : value;
  return persona ? persona.slice(0, 64) : undefined;
}

/**
 * The persona this request acts as: the session's, bound at sign-in, wins; a read-only header also
 * restricts a session signed in without one.
 */
function personaOf(request: FastifyRequest): string | undefined {
  const bound = request.session?.get('persona');
  const named = personaHeader(request);
  if (bound !== undefined && (named === undefined || personaMayAct(named))) return bound;
  return named ?? bound;
}

/**
 * What a page does when the registry refuses the session's credential (revoked or expired meanwhile):
 * the session ends and the person is asked to sign in again, back to where they were.
 */
export async function endRevokedSession(request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> {
  return endSession(request, reply, 'revoked');
}

/**
 * Ends a signed-in session: the credential is dropped and the session keeps only why, so whichever
 * request comes next (a page, a live section, the event stream) the person is told. The session keeps
 * its id: a request already on its way with the same cookie (a reload racing a navigation) then finds
 * the reason too, where a new id would have left it a fresh, reasonless session. (Signing in issues a
 * new id; that is where fixation matters.)
 */
async function endSession(request: FastifyRequest, reply: FastifyReply, reason: 'expired' | 'revoked'): Promise<FastifyReply> {
  closeLiveStreams(request.session.sessionId);
  for (const field of ['credential', 'viewer', 'signedInAt', 'seenAt'] as const) request.session.set(field, undefined);
  request.session.set('ended', reason);
  return toSignIn(request, reply, reason);
}

function toSignIn(request: FastifyRequest, reply: FastifyReply, reason: string | undefined): FastifyReply {
  const next = request.method === 'GET' ? request.url : '/dashboard';
  const query = new URLSearchParams({ next, ...(reason ? { reason } : {}) });
  // The event stream is not a page: an EventSource cannot follow a redirect to HTML. It is told to
  // reload, and the page then goes to the sign-in form.
  if (request.url.startsWith('/live')) return sendStreamEnd(reply, 401, errorEnvelope('UNAUTHORIZED', 'Sign in to the console again.'));
  // Nor is a task's relay: its page is told why it stops; the page's own /live stream then reloads it.
  if (ACTING_READS.test(request.url.split('?')[0] ?? '')) return sendTaskError(reply, 'This session has ended: sign in to the console again to follow the task.');
  // htmx refreshes a section with a GET: send the whole page to the sign-in form instead.
  if (request.headers['hx-request']) return reply.header('hx-redirect', `/sign-in?${query}`).code(204).send();
  return reply.redirect(`/sign-in?${query}`, 303);
}

/**
 * Only a path on this console, never another site (an open redirect): no control characters or
 * backslashes (browsers drop tabs and read `\` as `/`, so `/\t/evil.example` would leave); what the
 * URL parser makes of it must stay on this origin; and the path it resolves to must not begin with
 * `//`, which a browser reads as another host (`/.//evil.example` resolves to `//evil.example`).
 * What it returns, given again, comes back unchanged.
 */
export function safeNext(value: string | undefined): string {
  const fallback = '/dashboard';
  // eslint-disable-next-line no-control-regex -- control characters are exactly what is refused
  if (!value || !value.startsWith('/') || value.startsWith('//') || /[\u0000-\u001f\u007f\\]/.test(value)) return fallback;
  const url = URL.parse(value, CONSOLE_BASE);
  if (url === null || url.origin !== CONSOLE_BASE) return fallback;
  const path = `${url.pathname}${url.search}${url.hash}`;
  return path.startsWith('/') && !path.startsWith('//') ? path : fallback;
}

/** The base `next` paths are resolved against: a name no one can own. */
const CONSOLE_BASE = 'http://console.invalid';

type SignInState = { next: string; notice?: string | undefined; error?: string; problem?: Parameters<typeof Problem>[0]; status?: number };

function signInPage(request: FastifyRequest, reply: FastifyReply, state: SignInState) {
  return sendPage(
    request,
    reply,
    { title: 'Sign in', status: state.status ?? 200 },
    html`<div class="narrow">
      ${state.notice && html`<p class="notice notice-info" role="status">${state.notice}</p>`}
      ${state.error && html`<p class="problem" role="alert" id="sign-in-error">${state.error}</p>`}
      ${state.problem && html`<${Problem} ...${state.problem} />`}
      <form method="post" action="/sign-in" class="panel stack" aria-describedby=${state.error ? 'sign-in-error' : undefined}>
        <input type="hidden" name="_csrf" value=${reply.generateCsrf()} />
        <input type="hidden" name="next" value=${state.next} />
        <label for="credential">API key or access token</label>
        <input id="credential" name="credential" type="password" autocomplete="off" required spellcheck="false" aria-describedby="credential-help" />
        <p id="credential-help" class="muted small">An administrator's key (<code>rk_…</code>, holding <code>registry:admin</code>), or an access token when the registry runs in <code>jwt</code> mode. It stays on the console's server; the browser gets only a session cookie.</p>
        <button type="submit">Sign in</button>
      </form>
    </div>`,
  );
}

/** A request no person made: the event stream, or a live section's refresh it triggered. */
function isBackground(request: FastifyRequest, path: string): boolean {
  if (path === '/live') return true;
  const trigger = request.headers['hx-trigger'];
  return typeof trigger === 'string' && trigger.startsWith('live-refresh-');
}

export type ConsoleAccessOptions = { readonly config: ConsoleConfig; readonly registry: RegistryClient; readonly clock: Clock };

/** `registerAccess` as the `ward-console-access` plugin: it needs the session and CSRF plugins registered first. */
export const consoleAccess = fastifyPlugin<ConsoleAccessOptions>(
  async (app, options) => registerAccess(app, options),
  { name: 'ward-console-access', fastify: '5.x', dependencies: ['@fastify/session', '@fastify/csrf-protection'] },
);
