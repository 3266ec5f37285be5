/**
 * `/routing`: the discover and route explorer. Two GET forms (so every question is a link that can be
 * kept and shared): `/routing` asks `GET /v1/discover` and shows the ranked agents with each score's
 * breakdown; `/routing/route` asks `POST /v1/route` (which changes nothing) and shows the advice: the
 * chosen endpoint, the failover order, the constraints, the evidence and the trust bundle. Both
 * answers are signed by the registry; the console verifies each signature itself, against the
 * registry's published keys (./routing-signature.ts), and says which key signed and why it holds or
 * not. A refusal (422) is explained field by field and the form keeps what was typed.
 *
 * Discovery results follow the registry live. Routing advice does not: the weighted choice among
 * equal endpoints is seeded by each request's id, so a refresh could change the chosen endpoint under
 * the reader's eyes for no reason; "Ask again" asks anew.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { RegistryClient } from '../../client/registry-client.ts';
import { PROTOCOLS } from '../../contract/mcp-vocabulary.ts';
import { PURPOSES_OF_USE, TOKEN_BINDINGS } from '../../contract/agent-record.ts';
import { html, type View } from '../views/html.ts';
import { Section } from '../views/parts.ts';
import { sendPage } from '../views/send-page.ts';
import { credentialRefused, failureStatus, selfUrl, signInAgain, text } from './page-kit.ts';
import { checkSignedAnswer, SignatureReport } from './routing-signature.ts';
import { Advice, CheckField, FederationReport, invalidFields, RankedResults, Refusal, SelectField, TextField } from './routing-views.ts';

const DISCOVER_FIELDS = ['capability', 'jurisdiction', 'protocol', 'features', 'token_binding', 'residency', 'purpose_of_use', 'limit', 'federated'] as const;
const ROUTE_FIELDS = ['target', 'capability', 'jurisdiction', 'protocol', 'features', 'token_binding', 'priority', 'purpose_of_use', 'allowed_zones', 'deny_cross_zone', 'caller_jurisdiction'] as const;
const WORKLOAD_PRIORITIES = ['low', 'normal', 'high', 'critical'] as const;

type DiscoverForm = Partial<Record<(typeof DISCOVER_FIELDS)[number], string>>;

/** Form field → label, also used to name the fields a refusal is about. */
const LABELS: Record<string, string> = {
  capability: 'Capability',
  target: 'Target agent',
  jurisdiction: 'Jurisdiction',
  protocol: 'Protocol',
  features: 'Required features',
  token_binding: 'Token binding',
  residency: 'Endpoint region',
  purpose_of_use: 'Purpose of use',
  limit: 'Results',
  federated: 'Ask child registries',
  priority: 'Workload priority',
  allowed_zones: 'Allowed zones',
  deny_cross_zone: 'Deny other zones',
  caller_jurisdiction: 'Caller jurisdiction',
};

export function registerRoutingPage(app: FastifyInstance): void {
  app.get<{ Querystring: Record<string, unknown> }>('/routing', async (request, reply) => discoverPage(request, reply));
  app.get<{ Querystring: Record<string, unknown> }>('/routing/route', async (request, reply) => routePage(request, reply));
}

function readForm<K extends string>(query: Record<string, unknown>, fields: readonly K[]): { form: Partial<Record<K, string>>; asked: boolean } {
  const form: Partial<Record<K, string>> = {};
  for (const field of fields) {
    const value = text(query[field]);
    if (value !== undefined) form[field] = value;
  }
  // A form sent with every field empty is still a question (the registry says what is missing).
  return { form, asked: fields.some((field) => field in query) };
}

const list = (value: string | undefined) => (value === undefined ? undefined : value.split(',').map((item) => item.trim()).filter(Boolean));
/** A number as typed: a number when it is one, else the text, for the registry to refuse. */
const numberOrText = (value: string | undefined) => (value === undefined ? undefined : /^\d{1,9}$/.test(value) ? Number(value) : value);

function Tabs({ current }: { current: 'discover' | 'route' }): View {
  return html`<nav class="actions" aria-label="Routing tools">
    <a href="/routing" class=${current === 'discover' ? 'button' : 'button secondary'} aria-current=${current === 'discover' ? 'page' : undefined}>Discover agents</a>
    <a href="/routing/route" class=${current === 'route' ? 'button' : 'button secondary'} aria-current=${current === 'route' ? 'page' : undefined}>Routing advice</a>
  </nav>`;
}

async function discoverPage(request: FastifyRequest<{ Querystring: Record<string, unknown> }>, reply: FastifyReply) {
  const { form, asked } = readForm<(typeof DISCOVER_FIELDS)[number]>(request.query, DISCOVER_FIELDS);
  const filter = {
    capability: form.capability,
    jurisdiction: form.jurisdiction,
    protocol: form.protocol,
    require_features: list(form.features),
    token_binding: form.token_binding,
    residency: form.residency,
    purpose_of_use: form.purpose_of_use,
    limit: numberOrText(form.limit),
    federated: form.federated === 'true' ? true : undefined,
  } as unknown as Parameters<RegistryClient['discover']>[0];
  const [answer, jwks] = asked ? await Promise.all([request.registry.discover(filter), request.registry.jwks()]) : [undefined, undefined];
  if (answer && jwks && credentialRefused(request, answer, jwks)) return signInAgain(request, reply);
  const invalid = invalidFields(answer && !answer.ok ? answer.envelope : undefined);
  const signature = answer?.ok && jwks ? await checkSignedAnswer(answer.text, 'discovery', jwks, new Date()) : undefined;
  const described = describeDiscovery(form);
  const routeHref = (agentId: string) => {
    const search = new URLSearchParams({ target: agentId });
    for (const field of ['protocol', 'features', 'token_binding', 'purpose_of_use'] as const) if (form[field]) search.set(field, form[field]);
    return `/routing/route?${search}`;
  };
  const routeByCapability = () => {
    const search = new URLSearchParams();
    for (const field of ['capability', 'jurisdiction', 'protocol', 'features', 'token_binding', 'purpose_of_use'] as const) if (form[field]) search.set(field, form[field]);
    return `/routing/route?${search}`;
  };
  return sendPage(
    request,
    reply,
    { page: 'routing', title: 'Routing', live: true, status: answer && !answer.ok ? failureStatus(answer) : 200 },
    html`
      <${Tabs} current="discover" />
      <p class="muted">Ask the registry which agents offer a capability, as a caller would (<code>GET /v1/discover</code>), and see why they rank as they do.</p>
      <form class="filters panel" method="get" action="/routing" role="search" aria-label="Discover agents">
        <${TextField} prefix="d" name="capability" label="Capability" value=${form.capability} invalid=${invalid} required maxlength="128" placeholder="triage.assess" help="A skill, e.g. consent.verify" />
        <${TextField} prefix="d" name="jurisdiction" label="Jurisdiction" value=${form.jurisdiction} invalid=${invalid} size="4" maxlength="8" placeholder="GB" help="ISO 3166-1 code" />
        <${TextField} prefix="d" name="protocol" label="Protocol" value=${form.protocol} invalid=${invalid} list="known-protocols" maxlength="64" placeholder="Any" help="Agent or endpoint speaks it" />
        <${TextField} prefix="d" name="features" label="Required features" value=${form.features} invalid=${invalid} maxlength="2048" placeholder="sse, tasks" help="Comma list; all must hold" />
        <${SelectField} prefix="d" name="token_binding" label="Token binding" value=${form.token_binding} invalid=${invalid} options=${TOKEN_BINDINGS} help="How callers bind tokens" />
        <${TextField} prefix="d" name="residency" label="Endpoint region" value=${form.residency} invalid=${invalid} maxlength="64" placeholder="uk-south" help="Residency of an endpoint" />
        <${SelectField} prefix="d" name="purpose_of_use" label="Purpose of use" value=${form.purpose_of_use} invalid=${invalid} options=${PURPOSES_OF_USE} help="The agent's policy allows it" />
        <${TextField} prefix="d" name="limit" label="Results" value=${form.limit} invalid=${invalid} type="number" min="1" max="100" size="4" placeholder="20" help="1–100" />
        <${CheckField} prefix="d" name="federated" label="Ask child registries" checked=${form.federated === 'true'} help="Root and sovereign registries" />
        <div class="actions"><button type="submit">Discover</button>${asked && html`<a href="/routing">Clear</a>`}</div>
        <datalist id="known-protocols">${PROTOCOLS.map((protocol) => html`<option value=${protocol}></option>`)}</datalist>
      </form>
      ${!answer
        ? html`<p class="muted">Enter a capability to see the agents the registry would offer for it, best first, with the signed answer checked.</p>`
        : !answer.ok
          ? html`<${Section} id="discovery-results" title=${answer.status === null || answer.status >= 500 ? 'No answer from the registry' : 'Discovery refused'}><${Refusal} envelope=${answer.envelope} status=${answer.status} labels=${LABELS} /><//>`
          : html`
            <${Section} id="discovery-results" title=${`${answer.body.result_count} agent${answer.body.result_count === 1 ? '' : 's'} for ${form.capability ?? 'this query'}`} live=${selfUrl(request)}
              actions=${answer.body.result_count > 0 ? html`<a href=${routeByCapability()}>Routing advice for this capability</a>` : undefined}>
              <${RankedResults} answer=${answer.body} filtered=${described} routeHref=${routeHref} />
              ${answer.body.federation && html`<h3>Child registries</h3><${FederationReport} federation=${answer.body.federation} />`}
              <p class="muted small">Filters as the registry applied them: <code>${JSON.stringify(answer.body.query)}</code></p>
            <//>
            <${Section} id="discovery-signature" title="Signed answer" live=${selfUrl(request)}>
              <${SignatureReport} check=${signature} subject="this answer" />
            <//>`}
    `,
  );
}

/** The query in words, for the empty state. */
function describeDiscovery(form: DiscoverForm): string {
  const parts = [
    form.jurisdiction && `in ${form.jurisdiction}`,
    form.protocol && `speaking ${form.protocol}`,
    form.features && `with ${form.features}`,
    form.token_binding && `binding tokens by ${form.token_binding}`,
    form.residency && `with an endpoint in ${form.residency}`,
    form.purpose_of_use && `accepting ${form.purpose_of_use}`,
  ].filter(Boolean);
  return `the capability ${form.capability ?? '(none)'}${parts.length > 0 ? ` ${parts.join(', ')}` : ''}`;
}

async function routePage(request: FastifyRequest<{ Querystring: Record<string, unknown> }>, reply: FastifyReply) {
  const { form, asked } = readForm<(typeof ROUTE_FIELDS)[number]>(request.query, ROUTE_FIELDS);
  const zones = list(form.allowed_zones);
  const body = {
    target: form.target,
    capability: form.capability,
    jurisdiction: form.jurisdiction,
    protocol: form.protocol,
    required_features: list(form.features),
    residency: zones || form.deny_cross_zone ? { allowed_zones: zones, deny_cross_zone: form.deny_cross_zone === 'true' ? true : undefined } : undefined,
    workload: form.token_binding || form.priority ? { token_binding: form.token_binding, priority: form.priority } : undefined,
    purpose: form.purpose_of_use ? { purpose_of_use: form.purpose_of_use } : undefined,
    caller_jurisdiction: form.caller_jurisdiction,
  } as unknown as Parameters<RegistryClient['route']>[0];
  const [answer, jwks] = asked ? await Promise.all([request.registry.route(body), request.registry.jwks()]) : [undefined, undefined];
  if (answer && jwks && credentialRefused(request, answer, jwks)) return signInAgain(request, reply);
  const invalid = invalidFields(answer && !answer.ok ? answer.envelope : undefined);
  const signature = answer?.ok && jwks ? await checkSignedAnswer(answer.text, 'routing', jwks, new Date()) : undefined;
  // The advice names the agent by id only; its record gives the name a person knows it by.
  const record = answer?.ok ? await request.registry.getAgent(answer.body.resolved_target) : undefined;
  const name = record?.ok ? record.body.display_name : undefined;
  return sendPage(
    request,
    reply,
    { page: 'routing', title: 'Routing advice', status: answer && !answer.ok ? failureStatus(answer) : 200 },
    html`
      <${Tabs} current="route" />
      <p class="muted">Ask the registry where to send work, as a caller would (<code>POST /v1/route</code>, which changes nothing): for one agent, or for the best agent with a capability. Give a capability <em>or</em> a target agent, not both.</p>
      <form class="filters panel" method="get" action="/routing/route" role="search" aria-label="Ask for routing advice">
        <${TextField} prefix="r" name="capability" label="Capability" value=${form.capability} invalid=${invalid} maxlength="128" placeholder="triage.assess" help="Or a target agent" />
        <${TextField} prefix="r" name="target" label="Target agent" value=${form.target} invalid=${invalid} maxlength="256" placeholder="registry://gb/agents/…" help="Agent URI" />
        <${TextField} prefix="r" name="jurisdiction" label="Jurisdiction" value=${form.jurisdiction} invalid=${invalid} size="4" maxlength="8" placeholder="GB" help="Of the agent" />
        <${TextField} prefix="r" name="protocol" label="Protocol" value=${form.protocol} invalid=${invalid} list="route-protocols" maxlength="64" placeholder="Any" help="Of the endpoint" />
        <${TextField} prefix="r" name="features" label="Required features" value=${form.features} invalid=${invalid} maxlength="2048" placeholder="sse, tasks" help="Comma list" />
        <${SelectField} prefix="r" name="token_binding" label="Token binding" value=${form.token_binding} invalid=${invalid} options=${TOKEN_BINDINGS} help="The agent's must equal it" />
        <${SelectField} prefix="r" name="purpose_of_use" label="Purpose of use" value=${form.purpose_of_use} invalid=${invalid} options=${PURPOSES_OF_USE} any="None stated" help="Needed for PHI" />
        <${SelectField} prefix="r" name="priority" label="Workload priority" value=${form.priority} invalid=${invalid} options=${WORKLOAD_PRIORITIES} any="Not stated" help="Informational" />
        <${TextField} prefix="r" name="allowed_zones" label="Allowed zones" value=${form.allowed_zones} invalid=${invalid} maxlength="2048" placeholder="uk-south, uk-west" help="Comma list of regions" />
        <${CheckField} prefix="r" name="deny_cross_zone" label="Deny other zones" checked=${form.deny_cross_zone === 'true'} help="Else zones are a preference" />
        <${TextField} prefix="r" name="caller_jurisdiction" label="Caller jurisdiction" value=${form.caller_jurisdiction} invalid=${invalid} size="4" maxlength="8" placeholder="GB" help="For cross-border policy" />
        <div class="actions"><button type="submit">${asked ? 'Ask again' : 'Get routing advice'}</button>${asked && html`<a href="/routing/route">Clear</a>`}</div>
        <datalist id="route-protocols">${PROTOCOLS.map((protocol) => html`<option value=${protocol}></option>`)}</datalist>
      </form>
      ${!answer
        ? html`<p class="muted">The advice names the endpoint to call and what to fail over to, with the constraints, the evidence and the trust bundle a caller should keep, all signed by the registry.</p>`
        : !answer.ok
          ? html`<${Section} id="route-advice" title="No routing advice"><${Refusal} envelope=${answer.envelope} status=${answer.status} labels=${LABELS} discoverHref=${form.capability ? `/routing?${new URLSearchParams({ capability: form.capability })}` : '/routing'} /><//>`
          : html`
            <${Section} id="route-advice" title=${`Advice: ${name ?? answer.body.resolved_target}`}>
              <${Advice} answer=${answer.body} name=${name} />
              <p class="muted small">Registry request id <code>${answer.headers.get('x-request-id') ?? '—'}</code>: the weighted choice among equal endpoints is seeded by it.</p>
            <//>
            <${Section} id="route-signature" title="Signed advice">
              <${SignatureReport} check=${signature} subject="this advice" />
              ${signature && signature.state !== 'unsigned' && html`<p class="muted small">A caller can keep the signed advice as evidence of what the registry advised and when.</p>`}
            <//>`}
    `,
  );
}
