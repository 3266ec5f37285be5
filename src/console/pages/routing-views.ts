/**
 * The pieces of the `/routing` pages: form fields that keep their values and say when the registry
 * refused them, a refusal explained field by field, the ranked discovery results with each score's
 * breakdown, and the routing advice.
 */
import type { Static } from 'typebox';
import type { DiscoveryResponseSchema, RoutingResponseSchema } from '../../contract/schemas/discovery-schemas.ts';
import type { AnswerEnvelope } from '../../client/registry-answer.ts';
import { html, type View } from '../views/html.ts';
import { Badge, Empty, Facts, Problem, Time, count } from '../views/parts.ts';

export type DiscoveryAnswer = Static<typeof DiscoveryResponseSchema>;
export type DiscoveryResult = DiscoveryAnswer['results'][number];
export type RoutingAnswer = Static<typeof RoutingResponseSchema>;

export const ulidOf = (agentId: string) => agentId.slice(agentId.lastIndexOf('/') + 1);
export const agentHref = (agentId: string) => `/agents/${encodeURIComponent(ulidOf(agentId))}`;
export const trustHref = (subject: string) => `/trust?subject=${encodeURIComponent(subject)}`;

/** A score as the ranking writes it: at most three decimals. */
export const score = (value: number) => value.toLocaleString('en-GB', { maximumFractionDigits: 3 });

/**
 * The console field a registry error pointer is about: the last named segment of the pointer
 * (`/residency/allowed_zones/0` → `allowed_zones`), with the registry's feature lists under the one
 * name the forms use. An empty pointer is about the request as a whole.
 */
export function fieldOfPointer(pointer: string): string {
  const named = pointer.split('/').filter((segment) => segment !== '' && !/^\d+$/.test(segment));
  const field = named[named.length - 1] ?? '';
  return field === 'require_features' || field === 'required_features' ? 'features' : field;
}

type FieldError = { pointer: string; reason: string };

export function fieldErrors(envelope: AnswerEnvelope | undefined): FieldError[] {
  const errors = (envelope?.error.details as { errors?: unknown } | undefined)?.errors;
  if (!Array.isArray(errors)) return [];
  return errors
    .filter((error): error is { pointer: unknown; reason: unknown } => typeof error === 'object' && error !== null)
    .map((error) => ({ pointer: String(error.pointer ?? ''), reason: String(error.reason ?? '') }));
}

/**
 * A refused request: the registry's problem, then what it said about each field (a 422) or about
 * each endpoint it could not route to (a `NO_ROUTE`).
 */
export function Refusal({ envelope, status, labels, discoverHref = '/routing' }: { envelope: AnswerEnvelope; status: number | null; labels: Record<string, string>; discoverHref?: string }): View {
  const errors = fieldErrors(envelope);
  const details = envelope.error.details as { candidates?: unknown; endpoints?: unknown; agent_id?: unknown };
  const excluded: Array<{ agent_id?: string; endpoints: Array<{ index?: number; url?: string; reasons?: string[] }> }> =
    envelope.error.code !== 'NO_ROUTE'
      ? []
      : Array.isArray(details.candidates)
        ? (details.candidates as never[])
        : Array.isArray(details.endpoints)
          ? [{ agent_id: typeof details.agent_id === 'string' ? details.agent_id : undefined, endpoints: details.endpoints as never[] }]
          : [];
  return html`<div id="registry-refusal">
    <${Problem} envelope=${envelope} status=${status} />
    ${errors.length > 0 &&
    html`<h3>What the registry refused</h3>
      <ul>
        ${errors.map(({ pointer, reason }) => {
          const field = fieldOfPointer(pointer);
          return html`<li><strong>${labels[field] ?? (field || 'The request')}</strong>${pointer ? html` (<code>${pointer}</code>)` : ''}: ${reason}</li>`;
        })}
      </ul>`}
    ${envelope.error.code === 'NO_ROUTE' &&
    (excluded.length === 0
      ? html`<p>No agent passed the discovery filters at all: none is active, trust-validated and offers this capability with these filters. Try <a href=${discoverHref}>discovering</a> with fewer filters to see which agents offer it.</p>`
      : html`<h3>Why each candidate was excluded</h3>
          <div class="table-wrap"><table>
            <thead><tr><th scope="col">Agent</th><th scope="col">Endpoint</th><th scope="col">Excluded because</th></tr></thead>
            <tbody>${excluded.flatMap((candidate) =>
              candidate.endpoints.map((endpoint) => html`<tr>
                <td>${candidate.agent_id ? html`<a href=${agentHref(candidate.agent_id)}><code>${candidate.agent_id}</code></a>` : '—'}</td>
                <td><code>${endpoint.url ?? `#${endpoint.index ?? '?'}`}</code></td>
                <td>${(endpoint.reasons ?? []).join(', ') || '—'}</td>
              </tr>`),
            )}</tbody>
          </table></div>`)}
  </div>`;
}

/** The ids of the fields a refusal names, for `aria-invalid`. */
export function invalidFields(envelope: AnswerEnvelope | undefined): Set<string> {
  return new Set(fieldErrors(envelope).map(({ pointer }) => fieldOfPointer(pointer)).filter(Boolean));
}

type InputProps = {
  prefix: string;
  name: string;
  label: string;
  value: string | undefined;
  invalid: Set<string>;
  help?: string;
  [attribute: string]: unknown;
};

/** A labelled text input that keeps its value and is marked invalid when the registry refused it. */
export function TextField({ prefix, name, label, value, invalid, help, ...attributes }: InputProps): View {
  const id = `${prefix}-${name}`;
  const helpId = help ? `${id}-help` : undefined;
  const bad = invalid.has(name);
  return html`<div>
    <label for=${id}>${label}</label>
    <input id=${id} name=${name} value=${value ?? ''} aria-invalid=${bad ? 'true' : undefined} aria-describedby=${[helpId, bad ? 'registry-refusal' : undefined].filter(Boolean).join(' ') || undefined} spellcheck="false" autocomplete="off" ...${attributes} />
    ${help && html`<span id=${helpId} class="muted small">${help}</span>`}
  </div>`;
}

/** A labelled select of fixed values, "Any" first. */
export function SelectField({ prefix, name, label, value, invalid, options, any = 'Any', help }: { prefix: string; name: string; label: string; value: string | undefined; invalid: Set<string>; options: readonly string[]; any?: string; help?: string }): View {
  const id = `${prefix}-${name}`;
  const helpId = help ? `${id}-help` : undefined;
  const bad = invalid.has(name);
  return html`<div>
    <label for=${id}>${label}</label>
    <select id=${id} name=${name} aria-invalid=${bad ? 'true' : undefined} aria-describedby=${[helpId, bad ? 'registry-refusal' : undefined].filter(Boolean).join(' ') || undefined}>
      <option value="">${any}</option>
      ${options.map((option) => html`<option value=${option} selected=${value === option}>${option}</option>`)}
      ${value !== undefined && !options.includes(value) && html`<option value=${value} selected>${value}</option>`}
    </select>
    ${help && html`<span id=${helpId} class="muted small">${help}</span>`}
  </div>`;
}

export function CheckField({ prefix, name, label, checked, help }: { prefix: string; name: string; label: string; checked: boolean; help?: string }): View {
  const id = `${prefix}-${name}`;
  return html`<div>
    <label for=${id}><input type="checkbox" id=${id} name=${name} value="true" checked=${checked} aria-describedby=${help ? `${id}-help` : undefined} /> ${label}</label>
    ${help && html`<span class="muted small" id=${`${id}-help`}>${help}</span>`}
  </div>`;
}

const HEALTH_ORDER = ['healthy', 'unknown', 'unhealthy'];

/** The best endpoint health and the lowest priority of a result: what its breakdown scored. */
function scoredOn(result: DiscoveryResult): { health: string; priority: number | undefined } {
  const healths = result.endpoints.map((endpoint) => endpoint.health.status);
  const health = HEALTH_ORDER.find((state) => healths.includes(state as never)) ?? 'unknown';
  const priorities = result.endpoints.map((endpoint) => endpoint.priority);
  return { health, priority: priorities.length > 0 ? Math.min(...priorities) : undefined };
}

/** The ranked results: each agent's score and the four contributions it is the sum of. */
export function RankedResults({ answer, filtered, routeHref }: { answer: DiscoveryAnswer; filtered: string; routeHref: (agentId: string) => string }): View {
  if (answer.results.length === 0) {
    return html`<${Empty}>No agent matches ${filtered}. Only agents that are active and trust-validated are discovered, and every filter must hold; check the capability's spelling (skills look like <code>triage.assess</code>) or remove a filter.<//>`;
  }
  const federated = answer.results.some((result) => result.registry_id !== undefined);
  return html`<p class="muted small" id="ranking-rule">Best first. Score = trust level × 1000 + health (healthy 200, unknown 100, unhealthy 0) + jurisdiction match 10 + 999 ÷ (100 + best endpoint priority); equal scores fall back to age, then id.</p>
  <div class="table-wrap"><table aria-describedby="ranking-rule">
    <caption class="muted small">Ranked agents and each factor's contribution to the score</caption>
    <thead><tr>
      <th scope="col" class="num">Rank</th>
      <th scope="col">Agent</th>
      <th scope="col" class="num">Score</th>
      <th scope="col" class="num">Trust level</th>
      <th scope="col" class="num">Health</th>
      <th scope="col" class="num">Jurisdiction</th>
      <th scope="col" class="num">Priority</th>
      ${federated && html`<th scope="col">Registry</th>`}
      <th scope="col">Next</th>
    </tr></thead>
    <tbody>
      ${answer.results.map((result, index) => {
        const basis = scoredOn(result);
        const b = result.score_breakdown;
        return html`<tr data-agent-id=${result.agent_id}>
          <td class="num">${index + 1}</td>
          <td><a href=${agentHref(result.agent_id)}>${result.display_name}</a><br /><span class="muted small hide-narrow">${result.agent_id}</span></td>
          <td class="num"><strong>${score(result.score)}</strong></td>
          <td class="num" data-factor="trust_level">${score(b.trust_level)}<br /><span class="muted small">level ${result.trust_validation.level}</span></td>
          <td class="num" data-factor="health">${score(b.health)}<br /><span class="muted small">${basis.health}</span></td>
          <td class="num" data-factor="jurisdiction">${score(b.jurisdiction)}<br /><span class="muted small">${result.jurisdiction}${b.jurisdiction > 0 ? ' matches' : ''}</span></td>
          <td class="num" data-factor="priority">${score(b.priority)}<br /><span class="muted small">${basis.priority === undefined ? '—' : `best ${basis.priority}`}</span></td>
          ${federated && html`<td><code>${result.registry_id ?? '—'}</code></td>`}
          <td><a href=${routeHref(result.agent_id)} aria-label=${`Routing advice for ${result.display_name}`}>Route</a><br /><a href=${trustHref(result.agent_id)} aria-label=${`Trust bundle of ${result.display_name}`}>Trust bundle</a></td>
        </tr>`;
      })}
    </tbody>
  </table></div>`;
}

/** What each child registry answered, for a federated discovery. */
export function FederationReport({ federation }: { federation: NonNullable<DiscoveryAnswer['federation']> }): View {
  if (federation.children.length === 0) return html`<p class="muted small">Federated: this registry has no child registry with an address to ask.</p>`;
  return html`<div>
    <p>${federation.partial ? html`<${Badge} state="warning" label="Partial" /> Some child registries did not answer usably; their agents are missing.` : html`<${Badge} state="ok" label="Complete" /> Every child registry answered.`}</p>
    <div class="table-wrap"><table>
      <thead><tr><th scope="col">Child registry</th><th scope="col">Answer</th><th scope="col" class="num">Results</th><th scope="col">Note</th></tr></thead>
      <tbody>${federation.children.map((child) => html`<tr>
        <td><code>${child.registry_id}</code></td>
        <td><${Badge} state=${child.status === 'ok' ? 'ok' : 'failed'} label=${child.status} /></td>
        <td class="num">${count(child.result_count)}</td>
        <td>${child.error ?? (child.partial ? 'its own answer was partial' : '')}</td>
      </tr>`)}</tbody>
    </table></div>
  </div>`;
}

/** The advice: the endpoint to use, the failover order, the constraints and the evidence. */
export function Advice({ answer, name }: { answer: RoutingAnswer; name: string | undefined }): View {
  const { selected, alternatives, constraints, evidence, trust_bundle: bundle } = answer;
  return html`
    <div id="route-selected">
      <h3>Chosen endpoint</h3>
      <p><code>${selected.url}</code></p>
      <${Facts} items=${[
        ['Agent', html`<a href=${agentHref(answer.resolved_target)}>${name ?? answer.resolved_target}</a>${name ? html`<br /><span class="muted small">${answer.resolved_target}</span>` : ''}`],
        ['Protocol', selected.protocol],
        ['Region', selected.region ?? html`<span class="muted">none stated</span>`],
        ['Priority', String(selected.priority)],
        ['Weight', String(selected.weight)],
        ['Health used', html`<${Badge} state=${selected.health} />`],
      ]} />
    </div>
    <h3>Failover alternatives</h3>
    ${alternatives.length === 0
      ? html`<${Empty}>None: no other endpoint of this agent meets the request. If the chosen one fails, ask again.<//>`
      : html`<div class="table-wrap"><table id="route-alternatives">
          <caption class="muted small">In failover order: try each in turn if the one before it fails.</caption>
          <thead><tr><th scope="col" class="num">Order</th><th scope="col">URL</th><th scope="col">Protocol</th><th scope="col">Region</th><th scope="col" class="num">Priority</th></tr></thead>
          <tbody>${alternatives.map((alternative, index) => html`<tr>
            <td class="num">${index + 2}</td>
            <td><code>${alternative.url}</code></td>
            <td>${alternative.protocol}</td>
            <td>${alternative.region ?? '—'}</td>
            <td class="num">${alternative.priority}</td>
          </tr>`)}</tbody>
        </table></div>`}
    <div class="cols">
      <div>
        <h3>Constraints</h3>
        <${Facts} items=${[
          ['Patient data (PHI) allowed', constraints.phi_allowed ? html`<${Badge} state="ok" label="Yes" />` : html`<${Badge} state="unknown" label="No" />`],
          ['Concurrency hint', `at most ${count(constraints.max_concurrency_hint)} at once`],
          ['Rate hint', `${count(constraints.rate_limit_rps_hint)} requests/s`],
        ]} />
        <p class="muted small">PHI is allowed only when the agent's policy says so and the request names a purpose the agent accepts.</p>
      </div>
      <div>
        <h3>Evidence</h3>
        <${Facts} items=${[
          ['Registry', html`<code>${evidence.registry_id}</code>`],
          ['Record version', evidence.record_version],
          ['Delegation chain (root first)', evidence.delegation_chain.length === 0 ? '—' : html`<ol>${evidence.delegation_chain.map((registry) => html`<li><code>${registry}</code></li>`)}</ol>`],
        ]} />
      </div>
    </div>
    <h3>Trust bundle</h3>
    <${Facts} items=${[
      ['Issuer', html`<code>${bundle.issuer}</code>`],
      ['Trust level', String(bundle.trust_level)],
      ['Issued', html`<${Time} at=${bundle.issued_at} />`],
      ['Expires', html`<${Time} at=${bundle.expires_at} />`],
    ]} />
    <p><a href=${trustHref(answer.resolved_target)}>Verify this agent's trust bundle</a></p>
  `;
}
