/**
 * API keys on `/settings` (contract §7): the create form, its result page that shows the raw key the
 * one time the registry hands it over, and revocation behind a confirmation that names the key.
 *
 * The raw key only ever travels in the answer to the POST that created it: it is rendered straight
 * into that page (never kept in the session, a notice or a redirect URL; the page is `no-store`).
 * The form carries an idempotency key fixed when it was drawn, so sending it twice creates one key;
 * the second answer is the registry's replay, which holds no raw key, and the page says so. A form
 * drawn again after a failed sending keeps the key it was sent with: the failure may have been a
 * timeout after the registry committed, and sending again must then replay, not create a second key.
 */
import { randomUUID } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Static } from 'typebox';
import { SCOPES } from '../../core/call-context.ts';
import { PRICING_TIER_NAMES } from '../../core/pricing-tiers.ts';
import type { ApiKeySchema, CreateApiKeyBody, TiersSchema } from '../../contract/schemas/key-schemas.ts';
import { html, type View } from '../views/html.ts';
import { Badge, Facts, Problem, Time, count } from '../views/parts.ts';
import { sendPage } from '../views/send-page.ts';
import { CsrfField, credentialRefused, failureStatus, keepNotice, signInAgain, text, type Failure } from './page-kit.ts';

export type ApiKey = Static<typeof ApiKeySchema>;
type PricingTier = Static<typeof TiersSchema>['tiers'][number];

/** What each scope allows, as the person choosing scopes reads it (contract §7). */
export const SCOPE_WORDS: Record<(typeof SCOPES)[number], string> = {
  'registry:read': 'read: registry metadata, agents, discovery and routing, registries, trust, events',
  'registry:write': 'register and update agents, change their status',
  'registry:admin': 'administer: keys and usage, child registries, signing-key rotation, sign-in to this console',
  'mesh:invoke': 'call mesh agents through the gateway',
};

/** The create form's fields as typed, kept to draw the form again after a refusal. */
type KeyForm = { org_id: string; display_name: string; tier: string; scopes: string[]; expires_at: string };

type KeyFormBody = { org_id?: string; display_name?: string; tier?: string; scopes?: string | string[]; expires_at?: string; idempotency_key?: string };

const EMPTY_FORM: KeyForm = { org_id: '', display_name: '', tier: 'developer', scopes: ['registry:read'], expires_at: '' };

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Where a registry validation error points, as the form names the field. */
const FIELD_LABELS: Record<string, string> = {
  '/org_id': 'Organisation id',
  '/display_name': 'Name',
  '/tier': 'Tier',
  '/scopes': 'Scopes',
  '/expires_at': 'Expires',
};

/** The key's state in one word: revoked, expired or active. */
export function keyState(key: Pick<ApiKey, 'active' | 'revoked_at'>): 'active' | 'revoked' | 'expired' {
  if (key.revoked_at) return 'revoked';
  return key.active ? 'active' : 'expired';
}

export function registerKeyPages(app: FastifyInstance): void {
  app.get('/settings/keys/new', async (request, reply) => createPage(request, reply, EMPTY_FORM, randomUUID()));

  app.post<{ Body: KeyFormBody }>('/settings/keys', async (request, reply) => {
    const form = formOf(request.body ?? {});
    // The form's own key, kept for any redrawing of the form (a new one only when it sent none usable).
    const sent = text(request.body?.idempotency_key);
    const idempotencyKey = sent && UUID.test(sent) ? sent : randomUUID();
    const expires = form.expires_at ? toRfc3339(form.expires_at) : undefined;
    if (expires === null) {
      return createPage(request, reply, form, idempotencyKey, { local: 'Expires is not a date and time: use the date picker, or write YYYY-MM-DDTHH:MM (UTC).' });
    }
    const body: Static<typeof CreateApiKeyBody> = {
      org_id: form.org_id,
      display_name: form.display_name,
      ...(form.tier ? { tier: form.tier as Static<typeof CreateApiKeyBody>['tier'] } : {}),
      scopes: form.scopes as Static<typeof CreateApiKeyBody>['scopes'],
      ...(expires ? { expires_at: expires } : {}),
    };
    const answer = await request.registry.createApiKey(body, { idempotencyKey });
    if (credentialRefused(request, answer)) return signInAgain(request, reply);
    if (!answer.ok) return createPage(request, reply, form, idempotencyKey, { failed: answer });
    const key = answer.body;
    request.log.info({ key_id: key.key_id, org_id: key.org_id }, 'console created an API key');
    return sendPage(
      request,
      reply,
      { page: 'settings', title: `${key.raw_key ? 'Key created' : 'Key already created'}: ${key.display_name}`, status: answer.status },
      html`
        ${key.raw_key
          ? html`<section class="secret panel stack" aria-labelledby="raw-key-title" id="raw-key-box">
              <h2 id="raw-key-title">The raw key, shown this once</h2>
              <p><code id="raw-key">${key.raw_key}</code></p>
              <p role="alert"><strong>Copy it now and keep it somewhere safe.</strong> It will not be shown again: the registry keeps only a keyed hash of it, and this page is not stored by the browser. If it is lost, revoke this key and create another.</p>
            </section>`
          : html`<div class="notice notice-info" role="status" id="raw-key-replayed">
              <p>This form had already been sent, and the key was created then: this is the registry's record of it. Its raw key was in the answer to that first sending only and cannot be shown again. If nobody copied it, revoke this key and create another.</p>
            </div>`}
        <section class="panel" aria-labelledby="created-key-title">
          <div class="panel-head"><h2 id="created-key-title">The new key</h2></div>
          <${KeyFacts} record=${key} />
        </section>
        <p class="actions"><a class="button secondary" href="/settings#api-keys">Back to the API keys</a></p>
      `,
    );
  });

  app.get<{ Params: { keyId: string } }>('/settings/keys/:keyId/revoke', async (request, reply) => revokePage(request, reply, request.params.keyId));

  app.post<{ Params: { keyId: string }; Body: { idempotency_key?: string } }>('/settings/keys/:keyId/revoke', async (request, reply) => {
    const { keyId } = request.params;
    const answer = await request.registry.revokeApiKey(keyId, { idempotencyKey: text(request.body?.idempotency_key) ?? randomUUID() });
    if (credentialRefused(request, answer)) return signInAgain(request, reply);
    if (!answer.ok) return revokePage(request, reply, keyId, answer);
    const after = await request.registry.getApiKey(keyId);
    // Revoking the key this session signed in with ends the session at the next page.
    if (credentialRefused(request, after)) return signInAgain(request, reply);
    keepNotice(request, after.ok ? `Key ${after.body.display_name} (${after.body.key_prefix}…, ${after.body.org_id}) was revoked.` : `Key ${keyId} was revoked.`);
    return reply.redirect('/settings#api-keys', 303);
  });
}

function formOf(body: KeyFormBody): KeyForm {
  const scopes = [body.scopes ?? []].flat().filter((scope): scope is string => typeof scope === 'string' && scope !== '');
  return {
    org_id: text(body.org_id) ?? '',
    display_name: text(body.display_name) ?? '',
    tier: text(body.tier) ?? '',
    scopes: [...new Set(scopes)],
    expires_at: text(body.expires_at) ?? '',
  };
}

/**
 * A `datetime-local` value (or a bare date) read as UTC, as the form's label says, in RFC 3339 with
 * milliseconds; null when it is not one.
 */
export function toRfc3339(value: string): string | null {
  const match = /^(\d{4}-\d{2}-\d{2})(?:[T ](\d{2}:\d{2})(?::(\d{2})(\.\d{1,3})?)?)?(?:Z)?$/.exec(value.trim());
  if (!match) return null;
  const [, date, time = '00:00', seconds = '00', fraction = ''] = match;
  const at = new Date(`${date}T${time}:${seconds}${fraction}Z`);
  if (Number.isNaN(at.getTime()) || at.toISOString().slice(0, 10) !== date) return null;
  return at.toISOString();
}

/** The registry's tiers for the form's select, or the refusal (the form then offers the tier names it knows). */
async function tierChoices(request: FastifyRequest): Promise<{ tiers: PricingTier[] | null; failed: Failure | undefined }> {
  const answer = await request.registry.tiers();
  return answer.ok ? { tiers: answer.body.tiers, failed: undefined } : { tiers: null, failed: answer };
}

/** The create form; `idempotencyKey` is the form's own (a new one for a new form, the one it was sent with when drawn again). */
async function createPage(request: FastifyRequest, reply: FastifyReply, form: KeyForm, idempotencyKey: string, refusal: { failed?: Failure; local?: string } = {}) {
  const { tiers, failed: tiersFailed } = await tierChoices(request);
  if (tiersFailed && credentialRefused(request, tiersFailed)) return signInAgain(request, reply);
  const { failed, local } = refusal;
  const status = failed ? failureStatus(failed) : local ? 422 : 200;
  const names: readonly string[] = tiers ? tiers.map((tier) => tier.name) : PRICING_TIER_NAMES;
  const issues = failed ? validationIssues(failed) : [];
  const invalid = new Set(issues.map((issue) => issue.pointer.split('/')[1] ?? ''));
  const describedBy = (field: string, help?: string) => [help, invalid.has(field) ? 'key-form-problem' : undefined].filter(Boolean).join(' ') || undefined;
  return sendPage(
    request,
    reply,
    { page: 'settings', title: 'Create an API key', status },
    html`
      <p><a href="/settings#api-keys">← API keys</a></p>
      <div id="key-form-problem">
        ${failed && html`<${Problem} envelope=${failed.envelope} status=${failed.status} />`}
        ${issues.length > 0 &&
        html`<div class="problem" id="key-form-issues">
          <p><strong>What to correct</strong></p>
          <ul>${issues.map((issue) => html`<li><strong>${FIELD_LABELS[issue.pointer] ?? issue.pointer}</strong> ${issue.reason}</li>`)}</ul>
        </div>`}
        ${failed?.envelope.error.code === 'IDEMPOTENCY_KEY_IN_PROGRESS' &&
        html`<p class="notice notice-info" role="status">The form was sent twice and the first sending is still being handled: look for the key in <a href="/settings#api-keys">the list</a> before sending again.</p>`}
        ${failed?.envelope.error.code === 'IDEMPOTENCY_KEY_REUSED' &&
        html`<p class="notice notice-info" role="status">This form was sent before with other values, and that sending may have created a key: look for it in <a href="/settings#api-keys">the list</a>. To create another key, start <a href="/settings/keys/new">a new form</a>.</p>`}
        ${local && html`<p class="problem" role="alert">${local}</p>`}
      </div>
      ${tiersFailed && html`<p class="small muted">The registry did not list its tiers (${tiersFailed.envelope.error.message}); the tier names below are this console's.</p>`}
      <form method="post" action="/settings/keys" class="panel stack narrow" aria-label="New API key">
        <${CsrfField} reply=${reply} />
        <input type="hidden" name="idempotency_key" value=${idempotencyKey} />
        <label for="org_id">Organisation id</label>
        <input id="org_id" name="org_id" value=${form.org_id} required maxlength="128" autocomplete="off" spellcheck="false"
          aria-invalid=${invalid.has('org_id') ? 'true' : undefined} aria-describedby=${describedBy('org_id', 'org_id-help')} />
        <p id="org_id-help" class="muted small">The organisation the key acts for: letters, digits and <code>. _ : -</code>, starting with a letter or digit. Agents registered with the key belong to it.</p>
        <label for="display_name">Name</label>
        <input id="display_name" name="display_name" value=${form.display_name} required maxlength="200" autocomplete="off"
          aria-invalid=${invalid.has('display_name') ? 'true' : undefined} aria-describedby=${describedBy('display_name', 'display_name-help')} />
        <p id="display_name-help" class="muted small">What the key is for, to recognise it in the list (for example “Ward Hospital triage integration”).</p>
        <label for="tier">Tier</label>
        <select id="tier" name="tier" aria-describedby=${describedBy('tier', 'tier-help')}>
          ${names.map((name) => {
            const tier = tiers?.find((candidate) => candidate.name === name);
            return html`<option value=${name} selected=${(form.tier || 'developer') === name}>${name}${tier ? ` — ${limitText(tier.requests_per_minute)}/min, ${limitText(tier.requests_per_day)}/day, ${limitText(tier.max_agents)} agents` : ''}</option>`;
          })}
        </select>
        <p id="tier-help" class="muted small">The key's limits; <a href="/settings#tiers">the tiers</a> lists them all.</p>
        <fieldset aria-describedby=${describedBy('scopes')}>
          <legend>Scopes</legend>
          ${SCOPES.map((scope) => {
            const id = `scope-${scope.replace(/[^a-z]/g, '-')}`;
            return html`<div>
              <input type="checkbox" id=${id} name="scopes" value=${scope} checked=${form.scopes.includes(scope)} aria-describedby=${`${id}-help`} />
              <label for=${id}><code>${scope}</code></label><br />
              <span id=${`${id}-help`} class="muted small">${SCOPE_WORDS[scope]}</span>
            </div>`;
          })}
        </fieldset>
        <label for="expires_at">Expires (UTC, optional)</label>
        <input id="expires_at" name="expires_at" type="datetime-local" value=${form.expires_at}
          aria-invalid=${invalid.has('expires_at') || local ? 'true' : undefined} aria-describedby=${describedBy('expires_at', 'expires_at-help')} />
        <p id="expires_at-help" class="muted small">Read as UTC. Leave empty for a key that does not expire; it can be revoked at any time.</p>
        <div class="actions">
          <button type="submit">Create the key</button>
          <a href="/settings#api-keys">Cancel</a>
        </div>
      </form>
    `,
  );
}

async function revokePage(request: FastifyRequest, reply: FastifyReply, keyId: string, failed?: Failure) {
  const answer = await request.registry.getApiKey(keyId);
  if (credentialRefused(request, answer)) return signInAgain(request, reply);
  if (!answer.ok) {
    return sendPage(request, reply, { page: 'settings', title: 'API key', status: failureStatus(answer) }, html`
      ${failed && html`<${Problem} envelope=${failed.envelope} status=${failed.status} />`}
      <${Problem} envelope=${answer.envelope} status=${answer.status} />
      <p><a href="/settings#api-keys">Back to the API keys</a></p>`);
  }
  const key = answer.body;
  const state = keyState(key);
  // The credential the session signed in with (access.ts), by its exact id.
  const ownKey = !request.viewer.openAccess && request.viewer.credentialId === key.key_id;
  return sendPage(
    request,
    reply,
    { page: 'settings', title: `Revoke key ${key.display_name}?`, status: failed ? failureStatus(failed) : 200 },
    html`
      ${failed && html`<${Problem} envelope=${failed.envelope} status=${failed.status} />`}
      ${state === 'revoked'
        ? html`<p role="alert">Key ${key.display_name} (<code>${key.key_prefix}…</code>) was already revoked <${Time} at=${key.revoked_at} />. <a href="/settings#api-keys">Back to the API keys</a></p>`
        : html`<form method="post" action=${`/settings/keys/${encodeURIComponent(key.key_id)}/revoke`} class="panel stack narrow">
            <p>You are about to <strong>revoke</strong> the key <strong>${key.display_name}</strong> of <strong>${key.org_id}</strong>:</p>
            <p>Every request made with it is refused from the next one on, on every registry instance. This cannot be undone: whoever uses it will need a new key.</p>
            ${ownKey && html`<p class="problem" role="alert"><strong>This is the key you are signed in with.</strong> Revoking it ends your session; you will need another <code>registry:admin</code> key to sign in again.</p>`}
            <${KeyFacts} record=${key} />
            <${CsrfField} reply=${reply} />
            <input type="hidden" name="idempotency_key" value=${randomUUID()} />
            <div class="actions">
              <button type="submit" class="danger">Revoke ${key.display_name}</button>
              <a href="/settings#api-keys">Cancel</a>
            </div>
          </form>`}
    `,
  );
}

function KeyFacts({ record: key }: { record: ApiKey }): View {
  return html`<${Facts} items=${[
    ['Name', key.display_name],
    ['Key id', html`<code>${key.key_id}</code>`],
    ['Key prefix', html`<code>${key.key_prefix}…</code>`],
    ['Organisation', key.org_id],
    ['Tier', key.tier],
    ['Scopes', html`${key.scopes.map((scope, index) => html`${index > 0 ? ' ' : ''}<code>${scope}</code>`)}`],
    ['State', html`<${Badge} state=${keyState(key)} />`],
    ['Created', html`<${Time} at=${key.created_at} />`],
    ['Expires', key.expires_at ? html`<${Time} at=${key.expires_at} />` : 'does not expire'],
    ['Last used', html`<${Time} at=${key.last_used_at} />`],
  ]} />`;
}

/** A limit figure: null is unlimited. */
export function limitText(value: number | null): string {
  return value === null ? 'unlimited' : count(value);
}

type Issue = { in: string; pointer: string; reason: string };

/** The registry's `details.errors` of a 422 (src/registry/http/validation.ts), when there are. */
function validationIssues(failed: Failure): Issue[] {
  const errors = (failed.envelope.error.details as { errors?: unknown }).errors;
  if (!Array.isArray(errors)) return [];
  return errors.filter(
    (issue): issue is Issue => typeof issue === 'object' && issue !== null && typeof (issue as Issue).pointer === 'string' && typeof (issue as Issue).reason === 'string',
  );
}
