/**
 * `/mesh`: the mesh gateway's agents and the tasks it forwards. Each agent with its state (and why it
 * is not running), port, uptime, last error, tasks in flight and its recent tasks; then the tasks in
 * flight and the recent ones with their states and durations — never a message. Read from the
 * gateway's `GET /health` and `GET /tasks` (gateway-reads.ts): the console is the gateway's client
 * over HTTP, as it is the registry's. The gateway has no event stream, so the page polls it (every
 * {@link POLL_SECONDS} s, through htmx, swapping the sections in place).
 */
import type { FastifyInstance } from 'fastify';
import { html, type View } from '../views/html.ts';
import { Badge, Empty, Facts, Section, Time, count, duration, ms } from '../views/parts.ts';
import { sendPage } from '../views/send-page.ts';
import { GATEWAY_STATE_BADGE, GatewayUnreachable, readGatewayHealth, readGatewayTasks, type GatewayAgent, type GatewayHealth, type GatewayTask, type GatewayTasks } from './gateway-reads.ts';
import type { PageDeps } from './index.ts';
import { selfUrl } from './page-kit.ts';

/** The gateway is a local read; a gateway that takes longer than this is as good as down. */
const GATEWAY_TIMEOUT_MS = 3_000;
/** How often the page reads the gateway again. */
export const POLL_SECONDS = 2;
const SECTIONS = ['mesh-gateway', 'mesh-agents', 'mesh-in-flight', 'mesh-recent'];

/** How each task state reads as a badge (the word stays the gateway's). */
const TASK_STATE_BADGE: Record<string, string> = {
  in_flight: 'pending',
  submitted: 'pending',
  working: 'pending',
  'input-required': 'warning',
  'auth-required': 'warning',
  completed: 'ok',
  answered: 'ok',
  failed: 'failed',
  rejected: 'failed',
  error: 'failed',
  unreachable: 'failed',
};

export function registerMeshPage(app: FastifyInstance, deps: PageDeps): void {
  const { config } = deps;
  app.get('/mesh', async (request, reply) => {
    const timeout = Math.min(GATEWAY_TIMEOUT_MS, config.CONSOLE_REGISTRY_TIMEOUT_MS);
    const [health, tasks] = await Promise.all([readGatewayHealth(config.GATEWAY_URL, timeout), readGatewayTasks(config.GATEWAY_URL, timeout)]);
    const now = Date.now();
    return sendPage(
      request,
      reply,
      { page: 'mesh', title: 'Mesh', liveLabel: `Live (every ${POLL_SECONDS} s)` },
      html`
        <div hidden="" id="mesh-poll" hx-get=${selfUrl(request)} hx-trigger=${`every ${POLL_SECONDS}s`} hx-select-oob=${SECTIONS.map((id) => `#${id}`).join(',')} hx-swap="none"></div>
        <${Section} id="mesh-gateway" title="Gateway">${GatewayFacts({ health, tasks })}<//>
        <${Section} id="mesh-agents" title="Agents">${health.ok ? AgentTable({ agents: health.agents, tasks, now }) : html`<p class="muted">No agents to show while the gateway cannot be reached.</p>`}<//>
        <${Section} id="mesh-in-flight" title="Tasks in flight">${TaskList({ tasks, which: 'inFlight' })}<//>
        <${Section} id="mesh-recent" title="Recent tasks">${TaskList({ tasks, which: 'recent' })}<//>
      `,
    );
  });
}

function GatewayFacts({ health, tasks }: { health: GatewayHealth; tasks: GatewayTasks }): View {
  if (!health.ok) return GatewayUnreachable({ id: 'mesh-unreachable', url: health.url, reason: health.reason });
  const running = health.agents.filter((agent) => agent.state === 'running').length;
  return html`
    <${Facts} items=${[
      ['Address', html`<code>${health.url}</code>`],
      ['State', html`<${Badge} state=${health.status === 'ok' ? 'ok' : 'warning'} label=${health.status} />`],
      ['Uptime', health.uptimeS === null ? '—' : duration(health.uptimeS)],
      ['Agents running', `${count(running)} of ${count(health.agents.length)}`],
      ['Tasks in flight', tasks.ok ? count(tasks.inFlight.length) : '—'],
    ]} />
    <p class="small muted">Read from the gateway every ${POLL_SECONDS} s. Agents start when first called and stop after their idle timeout: a stopped agent is normal.</p>
  `;
}

/** Why an agent is not running, in words (the gateway's last error when it has one). */
function stateReason(agent: GatewayAgent): View {
  if (agent.state === 'running') return null;
  if (agent.last_error) return html`<span class="small">${agent.last_error}</span>`;
  if (agent.state === 'stopped') return html`<span class="small muted">${agent.starts === 0 ? 'not called yet; starts when first called' : 'idle; starts again when called'}</span>`;
  if (agent.state === 'starting') return html`<span class="small muted">waiting for its /health</span>`;
  return null;
}

function AgentTable({ agents, tasks, now }: { agents: readonly GatewayAgent[]; tasks: GatewayTasks; now: number }): View {
  if (agents.length === 0) return html`<${Empty}>The gateway's manifest lists no agent: add one to <code>MESH_MANIFEST</code> (docs/mesh.md).<//>`;
  return html`<div class="table-wrap" tabindex="0" role="region" aria-label="Mesh agents table, scrolls sideways"><table id="mesh-agent-table" class="stack-narrow">
    <thead><tr><th scope="col">Agent</th><th scope="col">State</th><th scope="col" class="num">Port</th><th scope="col">Uptime</th><th scope="col" class="num">In flight</th><th scope="col">Recent tasks</th><th scope="col">Last error</th></tr></thead>
    <tbody>${agents.map((agent) => AgentRow({ agent, tasks, now }))}</tbody>
  </table></div>`;
}

function AgentRow({ agent, tasks, now }: { agent: GatewayAgent; tasks: GatewayTasks; now: number }): View {
  const inFlight = tasks.ok ? tasks.inFlight.filter((task) => task.alias === agent.alias).length : null;
  const recent = tasks.ok ? tasks.recent.filter((task) => task.alias === agent.alias) : [];
  const byState = new Map<string, number>();
  for (const task of recent) byState.set(task.state, (byState.get(task.state) ?? 0) + 1);
  const uptime = agent.state === 'running' && agent.running_since ? Math.max(0, Math.floor((now - Date.parse(agent.running_since)) / 1000)) : null;
  return html`<tr data-alias=${agent.alias} data-state=${agent.state}>
    <th scope="row" data-label="Agent"><code>${agent.alias}</code>${agent.dependencies.length > 0 && html`<br /><span class="small muted">needs ${agent.dependencies.join(', ')}</span>`}${agent.page_url && html`<br /><a class="small" href=${agent.page_url} data-page-link=${agent.alias}>Open its page<span class="sr-only"> (${agent.alias})</span></a>`}</th>
    <td data-label="State"><${Badge} state=${GATEWAY_STATE_BADGE[agent.state] ?? 'neutral'} label=${agent.state} />${agent.state === 'running' ? null : html`<br />${stateReason(agent)}`}</td>
    <td data-label="Port" class="num">${agent.port ?? html`<span class="muted">—</span>`}</td>
    <td data-label="Uptime">${uptime === null ? html`<span class="muted">not running</span>` : html`<span title=${`since ${agent.running_since ?? ''}`}>${duration(uptime)}</span>`}</td>
    <td data-label="In flight" class="num">${inFlight === null ? '—' : count(inFlight)}</td>
    <td data-label="Recent tasks">${recent.length === 0 ? html`<span class="muted">none</span>` : [...byState].map(([state, n], index) => html`${index > 0 && ', '}<span class="nowrap">${n} ${state.replace(/_/g, ' ')}</span>`)}</td>
    <td data-label="Last error">${agent.last_error
      ? html`<span class="small">${agent.last_error}</span>${agent.last_exit ? html`<br /><span class="small muted">exit ${agent.last_exit.code ?? agent.last_exit.signal ?? '?'} at <${Time} at=${agent.last_exit.at} /></span>` : ''}`
      : html`<span class="muted">none</span>`}</td>
  </tr>`;
}

function TaskList({ tasks, which }: { tasks: GatewayTasks; which: 'inFlight' | 'recent' }): View {
  if (!tasks.ok) return html`<p class="problem" role="alert">The gateway's task log could not be read: ${tasks.reason}.</p>`;
  const list = tasks[which];
  if (list.length === 0) {
    return which === 'inFlight'
      ? html`<${Empty}>No task is being forwarded now. A call to <code>POST /rpc/{alias}</code> on the gateway shows here while it runs.<//>`
      : html`<${Empty}>The gateway has forwarded no task since it started. Calls through <code>POST /rpc/{alias}</code> show here, the last ${tasks.kept} kept.<//>`;
  }
  const id = which === 'inFlight' ? 'mesh-in-flight-table' : 'mesh-recent-table';
  return html`<div class="table-wrap" tabindex="0" role="region" aria-label=${`${which === 'inFlight' ? 'Tasks in flight' : 'Recent tasks'} table, scrolls sideways`}><table id=${id} class="stack-narrow">
    <caption class="small muted">${which === 'inFlight' ? 'Newest first; the time so far.' : `Newest first, the last ${tasks.kept} the gateway kept. No message content is kept.`}</caption>
    <thead><tr><th scope="col">Agent</th><th scope="col">Method</th><th scope="col">State</th><th scope="col">Started</th><th scope="col" class="num">${which === 'inFlight' ? 'Running for' : 'Took'}</th></tr></thead>
    <tbody>${list.map((task) => TaskRow({ task }))}</tbody>
  </table></div>`;
}

function TaskRow({ task }: { task: GatewayTask }): View {
  return html`<tr data-alias=${task.alias} data-state=${task.state}>
    <th scope="row" data-label="Agent"><code>${task.alias}</code></th>
    <td data-label="Method"><code>${task.method}</code>${task.streamed && html` <span class="small muted">(stream)</span>`}</td>
    <td data-label="State"><${Badge} state=${TASK_STATE_BADGE[task.state] ?? 'neutral'} label=${task.state.replace(/_/g, ' ')} /></td>
    <td data-label="Started"><${Time} at=${task.started_at} /></td>
    <td data-label=${task.ended_at ? 'Took' : 'Running for'} class="num">${ms(task.duration_ms)}</td>
  </tr>`;
}
