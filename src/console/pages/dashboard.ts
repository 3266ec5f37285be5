/**
 * `/dashboard`: what an operator looks at first. Agents by status, endpoint health now and over the
 * last day, this registry instance's request and error rates over the last hour, charts of both over
 * the range a person picks (dashboard-charts.ts), the open alerts and the most recent changes. Everything comes from `GET /v1/admin/overview`, `GET /v1/events` and the
 * alert rules (../alerts/alert-rules.ts); the sections follow the registry live.
 */
import type { FastifyInstance } from 'fastify';
import { currentAlerts } from '../alerts/alert-cache.ts';
import { html } from '../views/html.ts';
import { Badge, Empty, Problem, Section, Time, count, percent } from '../views/parts.ts';
import { sendPage } from '../views/send-page.ts';
import { agentNames, SubjectName } from './agent-names.ts';
import { chartRangeOf, DashboardCharts } from './dashboard-charts.ts';
import { credentialRefused, failureStatus, selfUrl, signInAgain, text } from './page-kit.ts';

export function registerDashboardPage(app: FastifyInstance): void {
  app.get('/dashboard', async (request, reply) => {
    const [overview, recent, alerts] = await Promise.all([
      request.registry.overview(),
      request.registry.events({ limit: 10 }),
      currentAlerts(request.registry),
    ]);
    if (credentialRefused(request, overview, recent)) return signInAgain(request, reply);
    const names = recent.ok ? await agentNames(request.registry, recent.body.events.map((event) => event.subject)) : new Map<string, string>();
    const live = selfUrl(request);
    if (!overview.ok) {
      return sendPage(request, reply, { page: 'dashboard', title: 'Dashboard', live: true, status: failureStatus(overview) }, html`
        <${Section} id="dashboard-problem" title="Registry" live=${live}><${Problem} envelope=${overview.envelope} status=${overview.status} /><//>`);
    }
    const o = overview.body;
    const minutes = o.traffic.minutes;
    const requests = minutes.reduce((sum, minute) => sum + minute.requests, 0);
    const clientErrors = minutes.reduce((sum, minute) => sum + minute.client_errors, 0);
    const serverErrors = minutes.reduce((sum, minute) => sum + minute.server_errors, 0);
    const open = alerts.alerts;
    return sendPage(
      request,
      reply,
      { page: 'dashboard', title: 'Dashboard', live: true },
      html`
        <div class="grid">
          <${Section} id="dash-agents" title="Agents" live=${live}>
            <dl class="tiles">
              <div><dt>Total</dt><dd>${count(o.agents.total)}</dd></div>
              ${(['active', 'suspended', 'retired', 'revoked'] as const).map(
                (status) => html`<div><dt><a href=${`/agents?status=${status}`}>${status[0]?.toUpperCase()}${status.slice(1)}</a></dt><dd>${count(o.agents.by_status[status])}</dd></div>`,
              )}
            </dl>
            <p class="small muted">Trust: ${count(o.agents.by_trust_state.validated)} validated, ${count(o.agents.by_trust_state.pending)} pending, ${count(o.agents.by_trust_state.failed)} failed.</p>
          <//>
          <${Section} id="dash-endpoints" title="Endpoints of active agents" live=${live}>
            <dl class="tiles">
              <div><dt>Healthy</dt><dd>${count(o.endpoints.healthy)}</dd></div>
              <div><dt>Degraded</dt><dd>${count(o.endpoints.degraded)}</dd></div>
              <div><dt>Down</dt><dd>${count(o.endpoints.down)}</dd></div>
              <div><dt>Not probed</dt><dd>${count(o.endpoints.unknown)}</dd></div>
            </dl>
            <p class="small muted">Degraded: healthy but answering in ${o.endpoints.degraded_latency_ms} ms or more.</p>
          <//>
          <${Section} id="dash-alerts" title="Alerts" live=${live}>
            ${alerts.failures.length > 0 && html`<p class="small">Some checks could not run; see <a href="/alerts">Alerts</a>.</p>`}
            ${open.length === 0
              ? html`<p><${Badge} state="ok" label="No open alert" /></p>`
              : html`<p><strong>${open.length}</strong> open: ${open.filter((alert) => alert.severity === 'critical').length} critical, ${open.filter((alert) => alert.severity === 'warning').length} warning.</p>
                  <ul>${open.slice(0, 5).map((alert) => html`<li><${Badge} state=${alert.severity} /> <a href=${alert.href}>${alert.title}</a></li>`)}</ul>`}
            <p><a href="/alerts">All alerts</a></p>
          <//>
          <${Section} id="dash-traffic" title="Requests, last hour" live=${live}>
            <dl class="tiles">
              <div><dt>Requests</dt><dd>${count(requests)}</dd></div>
              <div><dt>4xx rate</dt><dd>${requests ? percent(clientErrors / requests) : '—'}</dd></div>
              <div><dt>5xx rate</dt><dd>${requests ? percent(serverErrors / requests) : '—'}</dd></div>
            </dl>
            <p class="small muted">Answered by registry instance <code>${o.traffic.instance_id}</code>.</p>
          <//>
        </div>
        <${Section} id="dash-charts" title="Over time" live=${live}>
          <${DashboardCharts} overview=${o} range=${chartRangeOf(text((request.query as { range?: unknown }).range))} now=${Date.parse(o.generated_at)} />
        <//>
        <${Section} id="dash-recent" title="Recent changes" live=${live}>
          ${!recent.ok
            ? html`<${Problem} envelope=${recent.envelope} status=${recent.status} />`
            : recent.body.events.length === 0
              ? html`<${Empty}>Nothing has changed yet.<//>`
              : html`<div class="table-wrap"><table id="recent-changes" class="stack-narrow">
                  <thead><tr><th scope="col">When</th><th scope="col">Change</th><th scope="col">Subject</th></tr></thead>
                  <tbody>${recent.body.events.map((event) => html`<tr>
                    <td data-label="When"><${Time} at=${event.occurred_at} /></td>
                    <td data-label="Change"><code>${event.type}</code></td>
                    <td data-label="Subject"><${SubjectName} subject=${event.subject} name=${names.get(event.subject)} /></td>
                  </tr>`)}</tbody>
                </table></div>`}
        <//>
      `,
    );
  });
}
