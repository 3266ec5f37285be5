/**
 * `/diagnostics`: what an operator checks when something is wrong. The registry instance that answered
 * (`GET /v1/admin/diagnostics`): version, uptime, identity, storage and its migration level, the event
 * log's position and how long since the last change, the instances sharing the database, Redis, the
 * discovery cache and the health prober. Then the mesh gateway's agents, read from the gateway's own
 * `/health` (it is not the registry), and the console itself.
 */
import type { FastifyInstance } from 'fastify';
import type { RegistryClient } from '../../client/registry-client.ts';
import { WARD_VERSION } from '../../core/version.ts';
import { html, type View } from '../views/html.ts';
import { Badge, Empty, Facts, Problem, Section, Time, count, duration, ms, percent } from '../views/parts.ts';
import { sendPage } from '../views/send-page.ts';
import { GATEWAY_STATE_BADGE, GatewayUnreachable, readGatewayHealth, type GatewayAgent, type GatewayHealth } from './gateway-reads.ts';
import type { PageDeps } from './index.ts';
import { credentialRefused, pageStatus, selfUrl, signInAgain } from './page-kit.ts';

/** The gateway's health is a local read; a gateway that takes longer than this is as good as down. */
const GATEWAY_TIMEOUT_MS = 3_000;


export function registerDiagnosticsPage(app: FastifyInstance, deps: PageDeps): void {
  const { config } = deps;
  app.get('/diagnostics', async (request, reply) => {
    const [diagnostics, newest, gateway] = await Promise.all([
      request.registry.diagnostics(),
      request.registry.events({ limit: 1 }),
      readGatewayHealth(config.GATEWAY_URL, Math.min(GATEWAY_TIMEOUT_MS, config.CONSOLE_REGISTRY_TIMEOUT_MS)),
    ]);
    if (credentialRefused(request, diagnostics, newest)) return signInAgain(request, reply);
    const live = selfUrl(request);

    const registrySections = RegistrySections({ diagnostics, newest, live, now: Date.now() });

    return sendPage(
      request,
      reply,
      { page: 'diagnostics', title: 'Diagnostics', live: true, status: pageStatus(diagnostics) },
      html`
        ${registrySections}
        <${Section} id="diag-gateway" title="Mesh gateway">${GatewaySection({ gateway })}<//>
        <${Section} id="diag-console" title="This console">
          <${Facts} items=${[
            ['Version', html`<code>${WARD_VERSION}</code>`],
            ['Registry URL', html`<code>${config.REGISTRY_URL}</code>`],
            ['Gateway URL', html`<code>${config.GATEWAY_URL}</code>`],
            ['Access', config.openAccess
              ? html`<${Badge} state="warning" label="open access" /> <span class="small">development: no sign-in</span>`
              : html`<${Badge} state="ok" label="sign-in" /> <span class="small">with a <code>registry:admin</code> credential</span>`],
          ]} />
          <p class="small"><a href="/settings#console-config">The console's whole configuration</a></p>
        <//>
      `,
    );
  });
}

type RegistryFacts = {
  diagnostics: Awaited<ReturnType<RegistryClient['diagnostics']>>;
  newest: Awaited<ReturnType<RegistryClient['events']>>;
  live: string;
  now: number;
};

/** The registry instance that answered: its identity, storage, event stream, scale, cache and prober. */
function RegistrySections({ diagnostics, newest, live, now }: RegistryFacts): View {
  if (!diagnostics.ok) {
    return html`<${Section} id="diag-registry" title="Registry" live=${live}><${Problem} envelope=${diagnostics.envelope} status=${diagnostics.status} /><//>`;
  }
  const d = diagnostics.body;
  const migrations = d.storage.migrations;
  const latestEvent = newest.ok ? newest.body.events[0] : undefined;
  const prober = d.health_prober;
  return html`
    <${Section} id="diag-registry" title="Registry instance" live=${live}>
      <${Facts} items=${[
        ['Version', html`<code>${d.version}</code>`],
        ['Node.js', html`<code>${d.node_version}</code>`],
        ['Instance id', html`<code>${d.instance_id}</code>`],
        ['Started', html`<${Time} at=${d.started_at} />`],
        ['Uptime', duration(d.uptime_s)],
        ['Registry id', html`<code>${d.registry.registry_id}</code>`],
        ['Tier', d.registry.tier],
        ['Jurisdiction', d.registry.jurisdiction],
        ['Environment', html`<${Badge} state=${d.registry.environment === 'production' ? 'ok' : 'neutral'} label=${d.registry.environment} />`],
        ['Authentication', html`<code>${d.registry.auth_mode}</code>`],
        ['Base URL', html`<code>${d.registry.base_url}</code>`],
      ]} />
    <//>
    <div class="cols">
      <${Section} id="diag-storage" title="Storage">
        <${Facts} items=${[
          ['Backend', d.storage.backend === 'postgres' ? 'PostgreSQL' : 'SQLite (embedded)'],
          ['Migrations', html`${migrations.applied} of ${migrations.expected} applied ${migrations.pending.length === 0
            ? html`<${Badge} state="ok" label="up to date" />`
            : html`<${Badge} state="warning" label=${`${migrations.pending.length} pending`} />`}`],
          ['Latest applied', migrations.latest ? html`<code>${migrations.latest}</code>` : html`<span class="muted">none</span>`],
          ['Transparency ledger', `${count(d.ledger.tree_size)} entries`],
        ]} />
        ${migrations.pending.length > 0 &&
        html`<h3>Pending migrations</h3><ul>${migrations.pending.map((name) => html`<li><code>${name}</code></li>`)}</ul>
          <p class="small">Another instance with a newer version may be waiting for these; an instance applies them when it starts.</p>`}
      <//>
      <${Section} id="diag-events" title="Event stream" live=${live}>
        <${Facts} items=${[
          ['Last committed event', html`<code>${d.events.last_seq}</code>`],
          ['Oldest retained event', html`<code>${d.events.oldest_retained_seq}</code>`],
          ['Retention', `${d.events.retention_days} days`],
          ['Newest event', !newest.ok
            ? html`<span class="muted">could not be read</span>`
            : latestEvent
              ? html`<code>${latestEvent.seq}</code> <code>${latestEvent.type}</code>, <${Time} at=${latestEvent.occurred_at} />`
              : html`<span class="muted">none yet</span>`],
          ['Since the last change', latestEvent ? duration(Math.max(0, Math.floor((now - Date.parse(latestEvent.occurred_at)) / 1000))) : '—'],
        ]} />
        ${!newest.ok && html`<${Problem} envelope=${newest.envelope} status=${newest.status} />`}
        <p class="small muted">This page follows the stream from the browser: the live badge at the top says whether it is connected.</p>
      <//>
    </div>
    <div class="cols">
      <${Section} id="diag-scale" title="Instances and Redis">
        <${Facts} items=${[
          ['Live instances', d.instances.live === null ? html`<span class="muted">unknown (this instance is not listening)</span>` : count(d.instances.live)],
          ['Redis', !d.redis.configured
            ? html`<${Badge} state="neutral" label="not configured" /> <span class="small muted">limits and idempotency locks are per database</span>`
            : d.redis.reachable
              ? html`<${Badge} state="ok" label="reachable" />`
              : html`<${Badge} state="down" label="unreachable" />`],
          ['Redis latency', ms(d.redis.latency_ms)],
        ]} />
      <//>
      <${Section} id="diag-cache" title="Discovery cache">
        <${Facts} items=${[
          ['Hit ratio', percent(d.discovery_cache.hit_ratio)],
          ['Hits', count(d.discovery_cache.hits)],
          ['Misses', count(d.discovery_cache.misses)],
          ['Entries', `${count(d.discovery_cache.entries)} of ${count(d.discovery_cache.max_entries)}`],
        ]} />
      <//>
    </div>
    <${Section} id="diag-prober" title="Health prober">
      <${Facts} items=${[
        ['State', prober.enabled ? html`<${Badge} state="ok" label="probing" />` : html`<${Badge} state="neutral" label="off" />`],
        ['Interval', prober.enabled ? (prober.interval_ms % 1000 === 0 ? duration(prober.interval_ms / 1000) : ms(prober.interval_ms)) : '—'],
        ['Last round', prober.last_round ? html`<${Time} at=${prober.last_round.at} />` : html`<span class="muted">${prober.enabled ? 'none yet' : 'never'}</span>`],
        ['Endpoints probed then', prober.last_round ? count(prober.last_round.probed) : '—'],
      ]} />
      ${!prober.enabled && html`<p class="small muted">Endpoint health is not probed (<code>REGISTRY_HEALTH_PROBES=false</code>): endpoints show as not probed and no endpoint-down alert can be raised.</p>`}
    <//>
  `;
}

function GatewaySection({ gateway }: { gateway: GatewayHealth }): View {
  if (!gateway.ok) return GatewayUnreachable({ id: 'gateway-unreachable', url: gateway.url, reason: gateway.reason });
  return html`
    <${Facts} items=${[
      ['Address', html`<code>${gateway.url}</code>`],
      ['State', html`<${Badge} state=${gateway.status === 'ok' ? 'ok' : 'warning'} label=${gateway.status} />`],
      ['Version', gateway.version ? html`<code>${gateway.version}</code>` : '—'],
      ['Uptime', gateway.uptimeS === null ? '—' : duration(gateway.uptimeS)],
    ]} />
    <h3>Agents</h3>
    <p class="small">Their tasks, uptime and ports: the <a href="/mesh">Mesh</a> page.</p>
    ${gateway.agents.length === 0
      ? html`<${Empty}>The gateway's manifest lists no agent.<//>`
      : html`<div class="table-wrap" tabindex="0" role="region" aria-label="Gateway agents table"><table id="gateway-agents" class="stack-narrow">
          <caption class="muted small">Agents start when first called and stop after their idle timeout; a stopped agent is normal.</caption>
          <thead><tr><th scope="col">Alias</th><th scope="col">State</th><th scope="col" class="num">PID</th><th scope="col" class="num">Restarts</th><th scope="col">Running since</th><th scope="col">Last error</th></tr></thead>
          <tbody>${gateway.agents.map((agent) => AgentRow({ agent }))}</tbody>
        </table></div>`}
  `;
}

function AgentRow({ agent }: { agent: GatewayAgent }): View {
  return html`<tr data-alias=${agent.alias}>
    <th scope="row" data-label="Alias"><code>${agent.alias}</code>${agent.dependencies.length > 0 && html`<br /><span class="small muted">needs ${agent.dependencies.join(', ')}</span>`}</th>
    <td data-label="State"><${Badge} state=${GATEWAY_STATE_BADGE[agent.state] ?? 'neutral'} label=${agent.state} /></td>
    <td data-label="PID" class="num">${agent.pid ?? html`<span class="muted">—</span>`}</td>
    <td data-label="Restarts" class="num">${agent.restarts}</td>
    <td data-label="Running since">${agent.running_since ? html`<${Time} at=${agent.running_since} />` : html`<span class="muted">not running</span>`}</td>
    <td data-label="Last error">${agent.last_error
      ? html`<span class="small">${agent.last_error}</span>${agent.last_exit ? html`<br /><span class="small muted">exit ${agent.last_exit.code ?? agent.last_exit.signal ?? '?'} at <${Time} at=${agent.last_exit.at} /></span>` : ''}`
      : html`<span class="muted">none</span>`}</td>
  </tr>`;
}
