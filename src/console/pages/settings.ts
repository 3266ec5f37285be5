/**
 * `/settings`: the API keys (listed, created with the raw key shown once, revoked after a
 * confirmation: settings-keys.ts), then every setting of the registry (as its diagnostics report it)
 * and of the console, grouped, searchable, each with its meaning, value, default and source
 * (settings-table.ts); the pricing tiers and their limits sit with the limits.
 */
import type { FastifyInstance } from 'fastify';
import type { Static } from 'typebox';
import type { TiersSchema } from '../../contract/schemas/key-schemas.ts';
import type { ConsoleConfig } from '../console-config.ts';
import { html, type View } from '../views/html.ts';
import { Badge, Empty, Pager, Problem, Section, Time } from '../views/parts.ts';
import type { PageDeps } from './index.ts';
import { credentialRefused, pageStatus, selfUrl, signInAgain, sendPageWithNotice, text } from './page-kit.ts';
import { keyState, limitText, registerKeyPages, type ApiKey } from './settings-keys.ts';
import { SettingGroups, settingRows } from './settings-table.ts';

const KEYS_PER_PAGE = 20;

type PricingTier = Static<typeof TiersSchema>['tiers'][number];

export function registerSettingsPage(app: FastifyInstance, deps: PageDeps): void {
  const { config } = deps;
  registerKeyPages(app);
  app.get<{ Querystring: { cursor?: string; q?: string } }>('/settings', async (request, reply) => {
    const cursor = text(request.query.cursor);
    const query = text(request.query.q)?.slice(0, 200);
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
        <${SettingGroups}
          rows=${settingRows(diagnostics.ok ? { values: diagnostics.body.configuration as Record<string, unknown>, sources: diagnostics.body.configuration_sources ?? {} } : null, config)}
          query=${query}
          host=${request.headers.host}
          registryNote=${diagnostics.ok
            ? html`The registry's values are those registry instance <code>${diagnostics.body.instance_id}</code> reported, defaults filled in; the console's are its own.`
            : html`<${Problem} envelope=${diagnostics.envelope} status=${diagnostics.status} />`}
          extras=${{
            limits: html`<h3 id="tiers">Tiers and their limits</h3>${tiers.ok ? TierTable({ tiers: tiers.body.tiers }) : html`<${Problem} envelope=${tiers.envelope} status=${tiers.status} />`}`,
            console: html`<${ConsoleAccess} config=${config} />`,
          }}
        />
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

function ConsoleAccess({ config }: { config: ConsoleConfig }): View {
  return html`<p id="console-config" class="small">
    ${config.openAccess
      ? html`<${Badge} state="warning" label="open access" /> Development: every page opens without sign-in, because the registry runs with authentication disabled and the console listens on loopback only.`
      : html`<${Badge} state="ok" label="sign-in" /> A person signs in with a credential holding <code>registry:admin</code>; cookies are ${config.secureCookies ? 'Secure (TLS)' : 'not marked Secure (no TLS)'}.`}
    ${' The console holds no secret: each person\'s credential stays in their session.'}
  </p>`;
}
