/**
 * `/settings`: the API keys (listed, created with the raw key shown once, revoked after a
 * confirmation: settings-keys.ts), the pricing tiers and their limits, the registry's effective
 * configuration as its diagnostics report it (secrets already replaced by "[redacted]" there) and the
 * console's own configuration, which holds no secret.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Static } from 'typebox';
import type { TiersSchema } from '../../contract/schemas/key-schemas.ts';
import type { ConsoleConfig } from '../console-config.ts';
import { html, type View } from '../views/html.ts';
import { Badge, Empty, Pager, Problem, Section, Time } from '../views/parts.ts';
import type { PageDeps } from './index.ts';
import { credentialRefused, pageStatus, selfUrl, signInAgain, sendPageWithNotice, text } from './page-kit.ts';
import { keyState, limitText, registerKeyPages, type ApiKey } from './settings-keys.ts';

/** What the registry's diagnostics put in place of a secret (src/registry/operations/diagnostics.ts). */
const REDACTED = '[redacted]';
const KEYS_PER_PAGE = 20;

type PricingTier = Static<typeof TiersSchema>['tiers'][number];

export function registerSettingsPage(app: FastifyInstance, deps: PageDeps): void {
  const { config } = deps;
  registerKeyPages(app);
  app.get<{ Querystring: { cursor?: string } }>('/settings', async (request, reply) => {
    const cursor = text(request.query.cursor);
    const [keys, tiers, diagnostics] = await Promise.all([
      request.registry.listApiKeys({ limit: KEYS_PER_PAGE, ...(cursor ? { cursor } : {}) }),
      request.registry.tiers(),
      request.registry.diagnostics(),
    ]);
    if (credentialRefused(request, keys, tiers, diagnostics)) return signInAgain(request, reply);
    const href = (next: string | undefined) => (next ? `/settings?${new URLSearchParams({ cursor: next })}#api-keys` : '/settings#api-keys');
    return sendPageWithNotice(
      request,
      reply,
      { page: 'settings', title: 'Settings', live: true, status: pageStatus(keys) },
      html`
        <${Section} id="api-keys" title="API keys" live=${selfUrl(request)}
          actions=${html`<div class="actions"><a class="button" href="/settings/keys/new">Create an API key</a></div>`}>
          ${keys.ok
            ? html`${KeyTable({ keys: keys.body.api_keys, first: !cursor })}<${Pager} next=${keys.body.next_cursor} first=${!cursor} href=${href} label="API key list" />`
            : html`<${Problem} envelope=${keys.envelope} status=${keys.status} />`}
        <//>
        <${Section} id="tiers" title="Tiers and their limits">
          ${tiers.ok ? TierTable({ tiers: tiers.body.tiers }) : html`<${Problem} envelope=${tiers.envelope} status=${tiers.status} />`}
        <//>
        <${Section} id="registry-config" title="Registry configuration">
          ${diagnostics.ok
            ? RegistryConfiguration({ values: diagnostics.body.configuration as Record<string, unknown>, instance: diagnostics.body.instance_id })
            : html`<${Problem} envelope=${diagnostics.envelope} status=${diagnostics.status} />`}
        <//>
        <${Section} id="console-config" title="Console configuration">${ConsoleConfiguration({ config, request })}<//>
      `,
    );
  });
}

function KeyTable({ keys, first }: { keys: readonly ApiKey[]; first: boolean }): View {
  if (keys.length === 0) {
    return html`<${Empty}>${first ? html`No API key exists yet. Create one here, or offline with <code>ward keys create</code>.` : 'No more keys.'}<//>`;
  }
  return html`<div class="table-wrap" tabindex="0" role="region" aria-label="API keys table"><table id="api-key-table">
    <caption class="muted small">Oldest first. A key is recognised by its prefix; the whole key was shown once, when it was created.</caption>
    <thead><tr>
      <th scope="col">Name</th><th scope="col">Prefix</th><th scope="col">Organisation</th><th scope="col">Tier</th><th scope="col">Scopes</th>
      <th scope="col">State</th><th scope="col" class="hide-narrow">Expires</th><th scope="col" class="hide-narrow">Last used</th><th scope="col"><span class="muted">Action</span></th>
    </tr></thead>
    <tbody>${keys.map((key) => {
      const state = keyState(key);
      return html`<tr data-key-id=${key.key_id}>
        <th scope="row">${key.display_name}<span class="hide-narrow"><br /><code class="small muted">${key.key_id}</code></span></th>
        <td>${key.key_prefix}…</td>
        <td>${key.org_id}</td>
        <td>${key.tier}</td>
        <td>${key.scopes.join(', ')}</td>
        <td><${Badge} state=${state} />${state === 'revoked' && key.revoked_at ? html`<br /><span class="small"><${Time} at=${key.revoked_at} /></span>` : ''}</td>
        <td class="hide-narrow">${key.expires_at ? html`<${Time} at=${key.expires_at} />` : html`<span class="muted">no expiry</span>`}</td>
        <td class="hide-narrow"><${Time} at=${key.last_used_at} /></td>
        <td>${state === 'revoked'
          ? html`<span class="muted">—</span>`
          : html`<a href=${`/settings/keys/${encodeURIComponent(key.key_id)}/revoke`} aria-label=${`Revoke ${key.display_name}`}>Revoke</a>`}</td>
      </tr>`;
    })}</tbody>
  </table></div>`;
}

function TierTable({ tiers }: { tiers: readonly PricingTier[] }): View {
  return html`<div class="table-wrap" tabindex="0" role="region" aria-label="Tiers table"><table id="tier-table">
    <caption class="muted small">Per API key. Request limits are token buckets refilled continuously; the daily quota resets at 00:00 UTC. Enterprise figures are set per key, unlimited where not set.</caption>
    <thead><tr>
      <th scope="col">Tier</th><th scope="col" class="num">Requests (per minute)</th><th scope="col" class="num">Requests (per day)</th>
      <th scope="col" class="num">Agents (per organisation)</th><th scope="col" class="num">Discovery (per minute)</th><th scope="col" class="num">Routing (per minute)</th>
      <th scope="col">Federation</th><th scope="col">Event stream</th><th scope="col">SLA (availability)</th>
    </tr></thead>
    <tbody>${tiers.map((tier) => html`<tr>
      <th scope="row">${tier.name}</th>
      <td class="num">${limitText(tier.requests_per_minute)}</td>
      <td class="num">${limitText(tier.requests_per_day)}</td>
      <td class="num">${limitText(tier.max_agents)}</td>
      <td class="num">${limitText(tier.discovery_per_minute)}</td>
      <td class="num">${limitText(tier.routing_per_minute)}</td>
      <td>${tier.federation ? 'yes' : 'no'}</td>
      <td>${tier.events_sse ? 'yes' : 'no'}</td>
      <td>${tier.sla ?? html`<span class="muted">none</span>`}</td>
    </tr>`)}</tbody>
  </table></div>`;
}

function RegistryConfiguration({ values, instance }: { values: Record<string, unknown>; instance: string }): View {
  const names = Object.keys(values).sort();
  const redacted = names.filter((name) => values[name] === REDACTED).length;
  return html`
    <p class="small muted">The effective configuration of registry instance <code>${instance}</code>, as it reported it: defaults filled in. ${redacted > 0
      ? `${redacted} value${redacted === 1 ? ' is a secret and is' : 's are secrets and are'} never shown: the registry sends [redacted] instead.`
      : ''} Change it in the registry's environment and restart it.</p>
    <div class="table-wrap" tabindex="0" role="region" aria-label="Registry configuration table"><table id="registry-config-table">
      <thead><tr><th scope="col">Variable</th><th scope="col">Value</th></tr></thead>
      <tbody>${names.map((name) => html`<tr data-variable=${name}>
        <th scope="row"><code>${name}</code></th>
        <td>${ConfigValue({ value: values[name] })}</td>
      </tr>`)}</tbody>
    </table></div>`;
}

function ConfigValue({ value }: { value: unknown }): View {
  if (value === REDACTED) return html`<${Badge} state="warning" label="[redacted]" /> <span class="small muted">secret, set but not shown</span>`;
  if (value === null || value === undefined || value === '') return html`<span class="muted">not set</span>`;
  return html`<code>${typeof value === 'string' ? value : JSON.stringify(value)}</code>`;
}

function ConsoleConfiguration({ config, request }: { config: ConsoleConfig; request: FastifyRequest }): View {
  const rows: Array<readonly [string, View]> = [
    ['REGISTRY_URL', html`<code>${config.REGISTRY_URL}</code>`],
    ['GATEWAY_URL', html`<code>${config.GATEWAY_URL}</code>`],
    ['CONSOLE_HOST', html`<code>${config.CONSOLE_HOST}</code>`],
    ['CONSOLE_PORT', html`<code>${config.CONSOLE_PORT}</code>${config.CONSOLE_PORT === 0 ? html` <span class="small muted">(any free port; this one answers at ${request.headers.host ?? '?'})</span>` : ''}`],
    ['CONSOLE_URL', ConfigValue({ value: config.CONSOLE_URL ?? null })],
    ['CONSOLE_ALLOWED_ORIGINS', html`${config.allowedOrigins.map((origin, index) => html`${index > 0 ? ', ' : ''}<code>${origin}</code>`)} <span class="small muted">(forms are accepted from these origins only; the first is the console's own)</span>`],
    ['CONSOLE_TLS_CERT_FILE', ConfigValue({ value: config.CONSOLE_TLS_CERT_FILE ?? null })],
    ['CONSOLE_TLS_KEY_FILE', config.CONSOLE_TLS_KEY_FILE ? html`<span>set</span>` : html`<span class="muted">not set</span>`],
    ['CONSOLE_SESSION_IDLE_MINUTES', html`<code>${config.CONSOLE_SESSION_IDLE_MINUTES}</code> <span class="small muted">minutes without a request end a session</span>`],
    ['CONSOLE_SESSION_MAX_HOURS', html`<code>${config.CONSOLE_SESSION_MAX_HOURS}</code> <span class="small muted">hours after sign-in a session ends anyway</span>`],
    ['CONSOLE_REGISTRY_TIMEOUT_MS', html`<code>${config.CONSOLE_REGISTRY_TIMEOUT_MS}</code> <span class="small muted">ms for each registry call</span>`],
    ['CONSOLE_LOG_LEVEL', html`<code>${config.CONSOLE_LOG_LEVEL}</code>`],
    ['REGISTRY_ENV', html`<code>${config.REGISTRY_ENV}</code>`],
    ['REGISTRY_AUTH_MODE', html`<code>${config.REGISTRY_AUTH_MODE}</code>`],
  ];
  return html`
    <p>
      ${config.openAccess
        ? html`<${Badge} state="warning" label="open access" /> Development: every page opens without sign-in, because the registry runs with authentication disabled and the console listens on loopback only.`
        : html`<${Badge} state="ok" label="sign-in" /> A person signs in with a credential holding <code>registry:admin</code>; cookies are ${config.secureCookies ? 'Secure (TLS)' : 'not marked Secure (no TLS)'}.`}
    </p>
    <div class="table-wrap" tabindex="0" role="region" aria-label="Console configuration table"><table id="console-config-table">
      <caption class="muted small">Read once when the console started. It holds no secret: each person's credential stays in their session.</caption>
      <thead><tr><th scope="col">Variable</th><th scope="col">Value</th></tr></thead>
      <tbody>${rows.map(([name, value]) => html`<tr data-variable=${name}><th scope="row"><code>${name}</code></th><td>${value}</td></tr>`)}</tbody>
    </table></div>`;
}
