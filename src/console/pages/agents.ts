/**
 * `/agents`: the registry's agents as a searchable, paginated table (the list API's own filters), one
 * agent's record with its trust validation, endpoint health and history, and the status actions.
 * An action is confirmed on a page of its own that names the agent, and is sent with the ETag the
 * person saw (If-Match) and an idempotency key fixed when the form was drawn, so a stale page is told
 * what changed instead of overwriting it, and a double submit acts once.
 */
import { randomUUID } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { AgentRecord } from '../../client/registry-client.ts';
import { AGENT_STATUSES } from '../../contract/agent-record.ts';
import { STATUS_ACTIONS, STATUS_ACTION_NAMES, nextStatus, type StatusAction } from '../../contract/agent-status.ts';
import { html, type View } from '../views/html.ts';
import { Badge, Empty, Facts, Pager, Problem, Section, Time, count, ms } from '../views/parts.ts';
import { Name, NameNotice, NameWarning } from '../views/name-warning.ts';
import { sendPage } from '../views/send-page.ts';
import { CsrfField, credentialRefused, failureStatus, firstFailure, keepNotice, pageStatus, selfUrl, sendPageWithNotice, signInAgain, takeNotice, text, type Failure } from './page-kit.ts';

type ListQuery = { q?: string; status?: string; jurisdiction?: string; org_id?: string; cursor?: string };

const ACTION_WORDS: Record<StatusAction, { verb: string; done: string; danger: boolean; explain: string }> = {
  suspend: { verb: 'Suspend', done: 'suspended', danger: true, explain: 'It stops being discovered and routed to until it is reinstated.' },
  reinstate: { verb: 'Reinstate', done: 'reinstated', danger: false, explain: 'It becomes active again and can be discovered and routed to.' },
  retire: { verb: 'Retire', done: 'retired', danger: true, explain: 'It is withdrawn for good; a retired agent can still be revoked but not brought back.' },
  revoke: { verb: 'Revoke', done: 'revoked', danger: true, explain: 'Its trust is withdrawn for good. This cannot be undone.' },
};

export function registerAgentPages(app: FastifyInstance): void {
  app.get<{ Querystring: ListQuery }>('/agents', async (request, reply) => listPage(request, reply));
  app.get<{ Params: { id: string } }>('/agents/:id', async (request, reply) => detailPage(request, reply, request.params.id));
  app.get<{ Params: { id: string; action: string } }>('/agents/:id/:action', async (request, reply) => {
    const action = actionOf(request.params.action);
    if (!action) return reply.callNotFound();
    return confirmPage(request, reply, request.params.id, action);
  });
  app.post<{ Params: { id: string; action: string }; Body: { etag?: string; reason?: string; idempotency_key?: string } }>(
    '/agents/:id/:action',
    async (request, reply) => {
      const action = actionOf(request.params.action);
      if (!action) return reply.callNotFound();
      const { id } = request.params;
      const reason = text(request.body?.reason);
      const etag = text(request.body?.etag);
      const answer = await request.registry.changeAgentStatus(id, action, reason, {
        idempotencyKey: text(request.body?.idempotency_key) ?? randomUUID(),
        ...(etag ? { ifMatch: etag } : {}),
      });
      if (credentialRefused(request, answer)) return signInAgain(request, reply);
      if (!answer.ok) {
        // Validation (a missing reason) goes back to the form; anything else to the record as it now is.
        if (answer.envelope.error.code === 'VALIDATION_ERROR') return confirmPage(request, reply, id, action, answer);
        return detailPage(request, reply, id, answer);
      }
      keepNotice(request, `${answer.body.display_name} was ${ACTION_WORDS[action].done}.`);
      return reply.redirect(`/agents/${encodeURIComponent(ulidOf(answer.body.agent_id))}`, 303);
    },
  );
}

function actionOf(value: string): StatusAction | undefined {
  return (STATUS_ACTION_NAMES as readonly string[]).includes(value) ? (value as StatusAction) : undefined;
}

const ulidOf = (agentId: string) => agentId.slice(agentId.lastIndexOf('/') + 1);

async function listPage(request: FastifyRequest<{ Querystring: ListQuery }>, reply: FastifyReply) {
  const filter = {
    q: text(request.query.q),
    status: text(request.query.status),
    jurisdiction: text(request.query.jurisdiction),
    org_id: text(request.query.org_id),
    cursor: text(request.query.cursor),
  };
  const answer = await request.registry.listAgents({ ...(filter as object), limit: 25 });
  if (credentialRefused(request, answer)) return signInAgain(request, reply);
  const href = (cursor: string | undefined) => {
    const search = new URLSearchParams();
    for (const [name, value] of Object.entries({ ...filter, cursor })) if (value) search.set(name, value);
    const query = search.toString();
    return query ? `/agents?${query}` : '/agents';
  };
  const filtered = Boolean(filter.q || filter.status || filter.jurisdiction || filter.org_id);
  return sendPageWithNotice(
    request,
    reply,
    { page: 'agents', title: 'Agents', live: true, status: pageStatus(answer) },
    html`
      <form class="filters panel" method="get" action="/agents" role="search" aria-label="Filter agents">
        <div><label for="q">Name or id</label><input id="q" name="q" type="search" value=${filter.q ?? ''} maxlength="200" /></div>
        <div>
          <label for="status">Status</label>
          <select id="status" name="status">
            <option value="">Any</option>
            ${AGENT_STATUSES.map((status) => html`<option value=${status} selected=${filter.status === status}>${status}</option>`)}
          </select>
        </div>
        <div><label for="jurisdiction">Jurisdiction</label><input id="jurisdiction" name="jurisdiction" value=${filter.jurisdiction ?? ''} size="4" maxlength="2" placeholder="GB" /></div>
        <div><label for="org_id">Organisation</label><input id="org_id" name="org_id" value=${filter.org_id ?? ''} maxlength="128" /></div>
        <div class="actions"><button type="submit">Search</button>${filtered && html`<a href="/agents">Clear</a>`}</div>
      </form>
      <${Section} id="agent-list" title=${answer.ok ? `${count(answer.body.total_count)} agent${answer.body.total_count === 1 ? '' : 's'}${filtered ? ' match' : ''}` : 'Agents'} live=${selfUrl(request)}>
        ${answer.ok ? AgentTable({ agents: answer.body.agents, filtered }) : html`<${Problem} envelope=${answer.envelope} status=${answer.status} />`}
        ${answer.ok && html`<${Pager} next=${answer.body.next_cursor} first=${!filter.cursor} href=${href} label="Agent list" />`}
      <//>
    `,
  );
}

function AgentTable({ agents, filtered }: { agents: readonly AgentRecord[]; filtered: boolean }): View {
  if (agents.length === 0) return html`<${Empty}>${filtered ? 'No agent matches these filters.' : 'No agent is registered yet. Agents appear here when they are registered through the API (POST /v1/agents).'}<//>`;
  return html`<div class="table-wrap"><table class="stack-narrow">
    <caption class="muted small">Oldest first (in the order they were registered). Select a name to see the record and act on it.</caption>
    <thead><tr><th scope="col">Name</th><th scope="col">Status</th><th scope="col">Jurisdiction</th><th scope="col" class="hide-narrow">Organisation</th><th scope="col">Trust</th><th scope="col">Endpoints</th><th scope="col" class="hide-narrow">Updated</th></tr></thead>
    <tbody>
      ${agents.map((agent) => {
        const health = agent.endpoints.map((endpoint) => endpoint.health.status);
        const up = health.filter((state) => state === 'healthy').length;
        const down = health.filter((state) => state === 'unhealthy').length;
        const unprobeable = agent.endpoints.filter((endpoint) => endpoint.health.reason === 'no_health_url').length;
        return html`<tr data-agent-id=${agent.agent_id}>
          <td data-label="Name"><a href=${`/agents/${ulidOf(agent.agent_id)}`}><${Name} name=${agent.display_name} /></a><${NameWarning} name=${agent.display_name} /></td>
          <td data-label="Status"><${Badge} state=${agent.status} /></td>
          <td data-label="Jurisdiction">${agent.jurisdiction}</td>
          <td data-label="Organisation" class="hide-narrow">${String((agent.owner as { org_id?: unknown }).org_id ?? '—')}</td>
          <td data-label="Trust"><${Badge} state=${agent.trust_validation.state} /></td>
          <td data-label="Endpoints">${down > 0 ? html`<${Badge} state="down" label=${`${down} down`} /> ` : ''}${up}/${health.length} healthy${unprobeable > 0 ? html`<br /><span class="muted small">${unprobeable} not probed: no health URL</span>` : ''}</td>
          <td data-label="Updated" class="hide-narrow"><${Time} at=${agent.updated_at} /></td>
        </tr>`;
      })}
    </tbody>
  </table></div>`;
}

async function detailPage(request: FastifyRequest, reply: FastifyReply, id: string, failed?: Failure) {
  const answer = await request.registry.getAgent(id);
  if (credentialRefused(request, answer)) return signInAgain(request, reply);
  if (!answer.ok) {
    return sendPage(request, reply, { page: 'agents', title: 'Agent', status: failureStatus(answer) }, html`
      <${Problem} envelope=${answer.envelope} status=${answer.status} />
      <p><a href="/agents">Back to the agents</a></p>`);
  }
  const agent = answer.body;
  const etag = answer.headers.get('etag') ?? `"${agent.version}"`;
  const history = await request.registry.events({ subject: agent.agent_id, limit: 20 });
  const refused = firstFailure(history);
  const actions = STATUS_ACTION_NAMES.filter((action) => nextStatus(agent.status, action));
  const trust = agent.trust_validation;
  return sendPage(
    request,
    reply,
    { page: 'agents', title: agent.display_name, live: true, status: failed ? failureStatus(failed) : 200 },
    html`
      <p><a href="/agents">← All agents</a></p>
      ${failed && html`<${Problem} envelope=${failed.envelope} status=${failed.status} />`}
      ${takeNotice(request)}
      <${NameNotice} name=${agent.display_name} what="agent's name" />
      <${NameNotice} name=${String((agent.owner as { org_name?: unknown }).org_name ?? '')} what="organisation's name" />
      <${Section} id="agent-record" title="Record" live=${`/agents/${encodeURIComponent(id)}`}
        actions=${html`<div class="actions" aria-label="Actions">${actions.map((action) => html`<a class=${`button ${ACTION_WORDS[action].danger ? 'danger' : 'secondary'}`} href=${`/agents/${ulidOf(agent.agent_id)}/${action}`}>${ACTION_WORDS[action].verb}</a>`)}</div>`}>
        <${Facts} items=${[
          ['Status', html`<${Badge} state=${agent.status} />${agent.status_reason ? html` <span class="muted">${agent.status_reason}</span>` : ''}`],
          ['Agent id', html`<code>${agent.agent_id}</code>`],
          ['Jurisdiction', agent.jurisdiction],
          ['Organisation', `${String((agent.owner as { org_name?: unknown }).org_name ?? '')} (${String((agent.owner as { org_id?: unknown }).org_id ?? '—')})`],
          ['Operator', String((agent.owner as { operator?: unknown }).operator ?? '—')],
          ['Version (ETag)', html`<code>${etag}</code>`],
          ['Skills', ((agent.capabilities as { skills?: string[] }).skills ?? []).join(', ') || '—'],
          ['Protocols', ((agent.capabilities as { protocols?: string[] }).protocols ?? []).join(', ') || '—'],
          ['Registered', html`<${Time} at=${agent.created_at} />`],
          ['Updated', html`<${Time} at=${agent.updated_at} />`],
        ]} />
        ${agent.description && html`<p>${agent.description}</p>`}
      <//>
      <div class="cols">
        <${Section} id="agent-trust" title="Trust validation">
          <${Facts} items=${[
            ['State', html`<${Badge} state=${trust.state} />`],
            ['Level', String(trust.level)],
            ['Checked', html`<${Time} at=${trust.checked_at} />`],
            ['Evidence expires', trust.expires_at ? html`<${Time} at=${trust.expires_at} />` : 'no expiry'],
          ]} />
          ${trust.errors.length > 0
            ? html`<h3>Problems</h3><ul>${trust.errors.map((error) => html`<li><code>${error.code}</code> at <code>${error.pointer}</code>: ${error.message}</li>`)}</ul>`
            : html`<p class="muted small">No problem was found in the trust material.</p>`}
          <p><a href=${`/trust?subject=${encodeURIComponent(agent.agent_id)}`}>Verify this agent's trust bundle</a></p>
        <//>
        <${Section} id="agent-endpoints" title="Endpoints">
          <div class="table-wrap"><table>
            <thead><tr><th scope="col">URL</th><th scope="col">Health</th><th scope="col" class="num">Latency</th><th scope="col">Checked</th></tr></thead>
            <tbody>${agent.endpoints.map((endpoint) => html`<tr>
              <td><code>${endpoint.url}</code><br /><span class="muted small">${endpoint.protocol}${endpoint.region ? ` · ${endpoint.region}` : ''} · priority ${endpoint.priority}</span></td>
              <td><${Badge} state=${endpoint.health.status} />${endpoint.health.reason ? html`<br /><span class="small">${healthReasonText(endpoint.health.reason)}</span>` : ''}</td>
              <td class="num">${ms(endpoint.health.latency_ms)}</td>
              <td><${Time} at=${endpoint.health.checked_at} /></td>
            </tr>`)}</tbody>
          </table></div>
        <//>
      </div>
      <${Section} id="agent-history" title="History" live=${`/agents/${encodeURIComponent(id)}`}>
        ${refused
          ? html`<${Problem} envelope=${refused.envelope} status=${refused.status} />`
          : history.ok && history.body.events.length > 0
            ? html`<ol class="steps">${history.body.events.map((event) => html`<li><span><${Time} at=${event.occurred_at} /></span><span><${Badge} state=${event.type.split('.')[1] ?? event.type} label=${event.type} /> <span class="muted small">event ${event.seq}</span></span></li>`)}</ol>`
            : html`<${Empty}>No event is recorded for this agent.<//>`}
      <//>
    `,
  );
}

async function confirmPage(request: FastifyRequest, reply: FastifyReply, id: string, action: StatusAction, failed?: Failure) {
  const answer = await request.registry.getAgent(id);
  if (credentialRefused(request, answer)) return signInAgain(request, reply);
  if (!answer.ok) return sendPage(request, reply, { page: 'agents', title: 'Agent', status: failureStatus(answer) }, html`<${Problem} envelope=${answer.envelope} status=${answer.status} />`);
  const agent = answer.body;
  const words = ACTION_WORDS[action];
  const allowed = nextStatus(agent.status, action);
  const etag = answer.headers.get('etag') ?? `"${agent.version}"`;
  const back = `/agents/${ulidOf(agent.agent_id)}`;
  return sendPage(
    request,
    reply,
    { page: 'agents', title: `${words.verb} ${agent.display_name}?`, status: failed ? failureStatus(failed) : 200 },
    html`
      ${failed && html`<${Problem} envelope=${failed.envelope} status=${failed.status} />`}
      ${!allowed
        ? html`<p role="alert">${agent.display_name} is ${agent.status}; it cannot be ${words.done} from there. <a href=${back}>Back to the record</a></p>`
        : html`<form method="post" action=${`${back}/${action}`} class="panel stack narrow">
            <p>You are about to <strong>${action}</strong> <strong>${agent.display_name}</strong> (<code>${agent.agent_id}</code>), now ${agent.status}. ${words.explain}</p>
            <${CsrfField} reply=${reply} />
            <input type="hidden" name="etag" value=${etag} />
            <input type="hidden" name="idempotency_key" value=${randomUUID()} />
            <label for="reason">Reason${STATUS_ACTIONS[action].reasonRequired ? '' : ' (optional)'}</label>
            <textarea id="reason" name="reason" maxlength="1000" required=${STATUS_ACTIONS[action].reasonRequired} aria-describedby="reason-help"></textarea>
            <p id="reason-help" class="muted small">Recorded with the change and in the transparency ledger. Do not include patient details.</p>
            <div class="actions">
              <button type="submit" class=${words.danger ? 'danger' : ''}>${words.verb} ${agent.display_name}</button>
              <a href=${back}>Cancel</a>
            </div>
          </form>`}
    `,
  );
}

/** An endpoint's health reason as an operator reads it; the registry's word stays visible. */
function healthReasonText(reason: string): string {
  return reason === 'no_health_url' ? 'Not probed: the endpoint has no health URL (no_health_url)' : reason;
}
