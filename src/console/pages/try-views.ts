/**
 * The try page's parts (try.ts): the agents discovery offers, the routing advice for the one picked,
 * the test-message form and the gateway's refusal of it, the task and its states, and the MCP tools'
 * forms built from their schemas with the last result.
 */
import type { RegistryClient } from '../../client/registry-client.ts';
import { html, type View } from '../views/html.ts';
import { Badge, Empty, Facts, Time, count } from '../views/parts.ts';
import type { RpcError, TaskView } from './try-gateway.ts';
import { fieldsOf, type Field, type McpTool, type ToolResult } from './try-mcp.ts';
import { agentHref, score } from './routing-views.ts';

type DiscoveryAnswer = Extract<Awaited<ReturnType<RegistryClient['discover']>>, { ok: true }>['body'];
type RoutingAnswer = Extract<Awaited<ReturnType<RegistryClient['route']>>, { ok: true }>['body'];

/** The agents discovery offered, each a link that picks it. */
export function PickList({ answer, capability, picked, href }: { answer: DiscoveryAnswer; capability: string; picked: string | undefined; href: (agentId: string) => string }): View {
  if (answer.results.length === 0) {
    return html`<${Empty}>No agent offers <code>${capability}</code>. Only active, trust-validated agents are discovered: check the capability's spelling (skills look like <code>triage.assess</code>), or register an agent that has it.<//>`;
  }
  return html`<ol class="pick-list" id="try-agents">
    ${answer.results.map((result) => {
      const current = result.agent_id === picked;
      return html`<li data-agent-id=${result.agent_id} class=${current ? 'picked' : undefined}>
        <a href=${href(result.agent_id)} aria-current=${current ? 'true' : undefined}>${current ? 'Picked: ' : 'Try '}${result.display_name}</a>
        <span class="muted small"> score ${score(result.score)}, trust level ${result.trust_validation.level}, ${result.jurisdiction}</span>
        <br /><span class="muted small break">${result.agent_id}</span>
      </li>`;
    })}
  </ol>`;
}

/** The advice for the picked agent, and whether the try page can send through it. */
export function AdviceSummary({ answer, name, alias, gatewayUrl }: { answer: RoutingAnswer; name: string | undefined; alias: string | undefined; gatewayUrl: string }): View {
  const { selected, constraints } = answer;
  return html`
    <${Facts} items=${[
      ['Agent', html`<a href=${agentHref(answer.resolved_target)}>${name ?? answer.resolved_target}</a>`],
      ['Chosen endpoint', html`<code class="break" id="try-endpoint">${selected.url}</code>`],
      ['Protocol', selected.protocol],
      ['Health used', html`<${Badge} state=${selected.health} />`],
      ['Failover alternatives', count(answer.alternatives.length)],
      ['Patient data (PHI) allowed', constraints.phi_allowed ? 'yes, by its policy' : 'no'],
    ]} />
    <p class="small">${alias
      ? html`This endpoint is the gateway's agent <code>${alias}</code>: a test message goes to <code>${gatewayUrl}/rpc/${alias}</code>.`
      : html`<strong>This endpoint is not at this console's gateway</strong> (<code>${gatewayUrl}</code>), so the try page cannot send to it: it sends through the gateway only.`}
      ${' '}<a href=${`/routing/route?target=${encodeURIComponent(answer.resolved_target)}`}>The full advice, with its signature checked</a></p>
  `;
}

/** What the PHI guard found, by detector and place (never the value: the gateway does not say it). */
function Findings({ data }: { data: unknown }): View {
  const findings = (data as { findings?: unknown } | undefined)?.findings;
  if (!Array.isArray(findings) || findings.length === 0) return null;
  return html`<ul id="try-phi-findings">${findings.map((finding) => {
    const { detector, pointer, in: where } = (finding ?? {}) as { detector?: unknown; pointer?: unknown; in?: unknown };
    return html`<li><strong>${String(detector ?? 'detector')}</strong> in ${where === 'header' ? 'header' : 'the message at'} <code>${String(pointer ?? '/')}</code></li>`;
  })}</ul>`;
}

/** Why the gateway (or the agent) refused the test message, in words, with the code it gave. */
export function GatewayRefusal({ error }: { error: RpcError }): View {
  const phi = error.code === -32012;
  const reason = (error.data as { reason?: unknown } | undefined)?.reason;
  const title = phi
    ? 'The gateway\'s PHI guard refused this message'
    : error.code === -32001 || error.code === -32000
      ? 'The gateway refused the credential'
      : error.code === -32011
        ? 'The agent could not be reached'
        : 'The gateway refused the message';
  const hint = phi
    ? 'Nothing was sent to the agent and no task was made. Test messages must not carry patient data: remove identifiers such as NHS numbers, MRNs, dates of birth, names with addresses, and send again.'
    : reason === 'bad_signature'
      ? 'The gateway does not take development tokens (its MESH_JWT_SECRET is not the default). Paste a mesh token of your own (npx ward token --sub <your DID>).'
      : error.code === -32001 || error.code === -32000
        ? 'Check the mesh token: it must be signed with the gateway\'s MESH_JWT_SECRET, unexpired, with scope mesh:invoke.'
        : '';
  return html`<div class="problem" role="alert" id="try-refusal" data-code=${String(error.code)}>
    <p class="problem-title"><strong>${title}</strong></p>
    <p>${error.message}</p>
    <${Findings} data=${error.data} />
    ${hint && html`<p>${hint}</p>`}
    <p class="muted small">JSON-RPC error <code>${String(error.code)}</code>${typeof reason === 'string' ? html`, reason <code>${reason}</code>` : ''}</p>
  </div>`;
}

const TASK_BADGE: Record<string, string> = { submitted: 'pending', working: 'pending', 'input-required': 'warning', completed: 'ok', failed: 'failed', canceled: 'neutral', rejected: 'failed' };
export const FINAL_STATES = new Set(['completed', 'failed', 'canceled', 'rejected', 'input-required']);

function partText(part: { kind?: string; text?: string; data?: unknown }, indent?: number): string {
  return part.kind === 'text' ? (part.text ?? '') : JSON.stringify(part.data ?? null, null, indent);
}

/** The task as the agent now has it: its state, its last message and its artifacts. */
export function TaskStatus({ task }: { task: TaskView }): View {
  const { state, timestamp, message } = task.status;
  const said = (message?.parts ?? []).map((part) => partText(part)).join(' ');
  return html`<div id="try-task-status" data-state=${state}>
    <${Facts} items=${[
      ['Task', html`<code class="break">${task.task_id}</code>`],
      ['State', html`<${Badge} state=${TASK_BADGE[state] ?? 'neutral'} label=${state} />`],
      ['Since', html`<${Time} at=${timestamp} />`],
      ['Agent said', said ? html`<span id="try-task-said">${said}</span>` : html`<span class="muted">nothing yet</span>`],
    ]} />
    ${(task.artifacts ?? []).length > 0 &&
    html`<h3>Artifacts</h3>${(task.artifacts ?? []).map((artifact) => html`<p class="small"><strong>${artifact.name ?? 'artifact'}</strong></p><pre class="result" tabindex="0" aria-label=${`Artifact ${artifact.name ?? ''}`}>${(artifact.parts ?? []).map((part) => partText(part, 2)).join('\n')}</pre>`)}`}
  </div>`;
}

/** The list the page script fills with each state as the stream brings it (web/console.js). */
export function TaskStates({ streamUrl }: { streamUrl: string }): View {
  return html`<h3 id="try-states-title">States as they arrive</h3>
    <ol id="try-task-states" class="states" data-task-stream=${streamUrl} aria-labelledby="try-states-title" aria-live="polite">
      <li class="muted" data-placeholder="">Following the task's stream through the gateway…</li>
    </ol>
    <noscript><p class="small muted">Without script the states do not stream in; reload the page to see the current state.</p></noscript>`;
}

/** Links between the tools, the open one marked. */
export function ToolTabs({ tools, current, href }: { tools: McpTool[]; current: string; href: (name: string) => string }): View {
  return html`<nav class="actions" aria-label="MCP tools">
    ${tools.map((tool) => html`<a href=${href(tool.name)} class=${tool.name === current ? 'button' : 'button secondary'} aria-current=${tool.name === current ? 'true' : undefined}>${tool.title ?? tool.name}</a>`)}
  </nav>`;
}

function FieldInput({ field, id, describedBy, value }: { field: Field; id: string; describedBy: string | undefined; value: string | undefined }): View {
  const common = { id, name: field.name, 'aria-describedby': describedBy, required: field.required || undefined };
  if (field.kind === 'select') {
    return html`<select ...${common}>
      ${!field.required && html`<option value="">Not given</option>`}
      ${field.options.map((option) => html`<option value=${option} selected=${(value ?? String(field.schema.default ?? '')) === option}>${option}</option>`)}
    </select>`;
  }
  if (field.kind === 'check') return html`<input type="checkbox" value="true" checked=${value === 'true'} ...${common} />`;
  if (field.kind === 'list') return html`<textarea rows="3" spellcheck="false" ...${common}>${value ?? ''}</textarea>`;
  if (field.kind === 'number') {
    return html`<input type="number" step=${field.integer ? '1' : 'any'} min=${field.schema.minimum} max=${field.schema.maximum} placeholder=${field.schema.default === undefined ? undefined : String(field.schema.default)} value=${value ?? ''} ...${common} />`;
  }
  return html`<input type=${field.inputType} value=${value ?? ''} minlength=${field.schema.minLength} maxlength=${field.schema.maxLength} spellcheck="false" autocomplete="off" ...${common} />`;
}

/** One tool's form, a field per argument of its input schema, labelled with its name and described by its description. */
export function ToolForm({ tool, csrf, values }: { tool: McpTool; csrf: View; values: Record<string, string> }): View {
  const fields = fieldsOf(tool);
  const changes = tool.annotations?.readOnlyHint !== true;
  return html`<form method="post" action=${`/try/tools/${encodeURIComponent(tool.name)}`} class="panel tool-form" id="try-tool-form" aria-labelledby="try-tool-title">
    <h3 id="try-tool-title"><code>${tool.name}</code>${tool.title && ` · ${tool.title}`}</h3>
    ${tool.description && html`<p class="small muted">${tool.description}</p>`}
    ${changes && html`<p class="small"><${Badge} state="warning" label="Changes the registry" /> This tool writes: calling it here acts on the registry with the MCP server's own key.</p>`}
    ${csrf}
    ${fields.length === 0 && html`<p class="muted">This tool takes no arguments.</p>`}
    <div class="filters">
      ${fields.map((field) => {
        const id = `tool-${field.name}`;
        const helpId = `${id}-help`;
        // A schema's pattern is said, not set as the input's pattern: HTML anchors it at both ends, JSON Schema does not.
        const help = [field.schema.description, field.schema.pattern ? `Matches ${field.schema.pattern}.` : '', field.kind === 'list' ? 'One a line.' : '', field.required ? 'Required.' : ''].filter(Boolean).join(' ');
        const input = html`<${FieldInput} field=${field} id=${id} describedBy=${help ? helpId : undefined} value=${values[field.name]} />`;
        return html`<div>
          ${field.kind === 'check' ? html`<label for=${id}>${input} ${field.name}</label>` : html`<label for=${id}>${field.name}</label>${input}`}
          ${help && html`<span id=${helpId} class="muted small">${help}</span>`}
        </div>`;
      })}
    </div>
    <div class="actions"><button type="submit">Call ${tool.name}</button></div>
  </form>`;
}

/** The last call's result: the tool's text, pretty-printed when it is JSON, or why there was none. */
export function ToolOutcome({ name, outcome }: { name: string; outcome: { ok: true; value: ToolResult } | { ok: false; reason: string } }): View {
  if (!outcome.ok) {
    return html`<div class="problem" role="alert" id="try-tool-result" data-outcome="failed"><p class="problem-title"><strong>The MCP server did not answer the call of ${name}</strong></p><p>${outcome.reason}</p></div>`;
  }
  const pretty = (text: string) => {
    try {
      return JSON.stringify(JSON.parse(text), null, 2);
    } catch {
      return text;
    }
  };
  const { isError, texts } = outcome.value;
  return html`<div id="try-tool-result" data-outcome=${isError ? 'error' : 'ok'} role=${isError ? 'alert' : 'status'} class=${isError ? 'problem' : 'notice notice-success'}>
    <p class="problem-title"><strong>${isError ? `${name} answered with an error` : `${name} answered`}</strong></p>
    ${texts.length === 0 ? html`<p class="muted">No text in the result.</p>` : texts.map((text) => html`<pre class="result" tabindex="0" aria-label=${`Result of ${name}`}>${pretty(text)}</pre>`)}
  </div>`;
}
