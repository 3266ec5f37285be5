/**
 * `/federation`: where this registry stands in root → sovereign → organisation (its metadata, and for
 * a delegated registry its own trust bundle's chain and the delegation statements in it, decoded for
 * reading), and the child registries it delegated to, paginated, each with its tier, jurisdiction,
 * address, status and pinned keys. Revoking a child is confirmed on a page of its own that names it
 * and asks for a reason, and is sent once (idempotency key fixed when the form was drawn).
 */
import { randomUUID } from 'node:crypto';
import type { Static } from 'typebox';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { RegistryRecordSchema } from '../../contract/schemas/registry-schemas.ts';
import { html, type View } from '../views/html.ts';
import { Badge, Empty, Facts, Pager, Problem, Section, Time } from '../views/parts.ts';
import { sendPage } from '../views/send-page.ts';
import { ChainPath, KeyBadge, StatementTable, Window } from '../views/trust-parts.ts';
import { CsrfField, credentialRefused, failureStatus, keepNotice, selfUrl, signInAgain, takeNotice, text, type Failure } from './page-kit.ts';

type RegistryRecord = Static<typeof RegistryRecordSchema>;
type RevokeFields = { registry?: string; reason?: string; idempotency_key?: string };

const PAGE_SIZE = 25;

export function registerFederationPage(app: FastifyInstance): void {
  app.get<{ Querystring: { cursor?: string } }>('/federation', async (request, reply) => federationPage(request, reply, text(request.query.cursor)));
  app.get<{ Querystring: { registry?: string } }>('/federation/revoke', async (request, reply) => {
    const id = text(request.query.registry);
    if (!id) return reply.redirect('/federation', 303);
    return confirmRevocation(request, reply, id);
  });
  app.post<{ Body: RevokeFields }>('/federation/revoke', async (request, reply) => {
    const id = text(request.body?.registry);
    if (!id) return reply.redirect('/federation', 303);
    const reason = text(request.body?.reason) ?? '';
    const idempotencyKey = text(request.body?.idempotency_key) ?? randomUUID();
    const answer = await request.registry.revokeRegistry(id, reason, { idempotencyKey });
    if (credentialRefused(request, answer)) return signInAgain(request, reply);
    if (!answer.ok) {
      // A missing reason goes back to the form (same key: a second send acts at most once); anything else to the list as it now is.
      if (answer.envelope.error.code === 'VALIDATION_ERROR') return confirmRevocation(request, reply, id, { idempotencyKey, failed: answer, reason });
      return federationPage(request, reply, undefined, answer);
    }
    keepNotice(request, `${answer.body.display_name} (${answer.body.registry_id}) was revoked. This registry issues it no further delegation statement.`);
    return reply.redirect('/federation', 303);
  });
}

const revokeHref = (id: string) => `/federation/revoke?${new URLSearchParams({ registry: id })}`;
const bundleHref = (id: string) => `/trust?${new URLSearchParams({ subject: id })}`;

async function federationPage(request: FastifyRequest, reply: FastifyReply, cursor: string | undefined, failed?: Failure) {
  const [metadata, children] = await Promise.all([request.registry.metadata(), request.registry.listRegistries({ ...(cursor ? { cursor } : {}), limit: PAGE_SIZE })]);
  const registryId = metadata.ok ? String(metadata.body.registry_id ?? '') : undefined;
  const tier = metadata.ok ? String(metadata.body.tier ?? '') : undefined;
  // A delegated registry tells its place through its own trust bundle: the chain and the statements above it.
  const own = registryId && tier !== 'root' ? await request.registry.trustBundle(registryId) : undefined;
  if (credentialRefused(request, metadata, children, ...(own ? [own] : []))) return signInAgain(request, reply);
  // After a refused revocation this page answers the POST; its sections then follow the list itself.
  const live = request.method === 'GET' ? selfUrl(request) : '/federation';
  if (!metadata.ok && metadata.status === null) {
    return sendPage(request, reply, { page: 'federation', title: 'Federation', live: true, status: failureStatus(metadata) }, html`
      <${Section} id="federation-problem" title="Registry" live=${live}><${Problem} envelope=${metadata.envelope} status=${metadata.status} /><//>`);
  }
  const status = failed ? failureStatus(failed) : !metadata.ok ? failureStatus(metadata) : !children.ok ? failureStatus(children) : 200;
  const href = (next: string | undefined) => (next ? `/federation?${new URLSearchParams({ cursor: next })}` : '/federation');
  return sendPage(
    request,
    reply,
    { page: 'federation', title: 'Federation', live: true, status },
    html`
      ${failed && html`<${Problem} envelope=${failed.envelope} status=${failed.status} />`}
      ${takeNotice(request)}
      <${Section} id="federation-place" title="This registry" live=${live}>
        ${metadata.ok
          ? html`<${Facts} items=${[
              ['Registry id', html`<code>${registryId}</code>`],
              ['Tier', html`<${Badge} state="tier" label=${tier ?? '?'} />`],
              ['Jurisdiction', String(metadata.body.jurisdiction ?? '—')],
              ['API base URL', html`<code>${String(metadata.body.api_base_url ?? '—')}</code>`],
            ]} />
            <${Place} registryId=${registryId ?? ''} tier=${tier ?? ''} own=${own} />`
          : html`<${Problem} envelope=${metadata.envelope} status=${metadata.status} />`}
      <//>
      <${Section} id="federation-children" title="Child registries" live=${live}>
        ${children.ok
          ? html`<${ChildTable} children=${children.body.registries} first=${!cursor} tier=${tier} />
              <${Pager} next=${children.body.next_cursor} first=${!cursor} href=${href} label="Child registries" />`
          : html`<${Problem} envelope=${children.envelope} status=${children.status} />`}
      <//>
    `,
  );
}

type BundleAnswer = Awaited<ReturnType<FastifyRequest['registry']['trustBundle']>>;

/** The chain from the root to this registry, and the statements that make it. */
function Place({ registryId, tier, own }: { registryId: string; tier: string; own: BundleAnswer | undefined }): View {
  if (tier === 'root' || !own) {
    return html`<h3>Chain</h3>
      <${ChainPath} chain=${[registryId]} here=${registryId} />
      <p class="small">This registry is the root of its federation and its own trust anchor: bundles of its agents and of its children verify with its keys alone (see <a href="/trust">Trust</a>).</p>`;
  }
  if (!own.ok) return html`<h3>Chain</h3><${Problem} envelope=${own.envelope} status=${own.status} />`;
  const { delegation_chain: chain, statements } = own.body;
  if (chain.length <= 1) {
    return html`<h3>Chain</h3>
      <${ChainPath} chain=${chain} here=${registryId} />
      <p><${Badge} state="pending" label="no delegation" /> This registry holds no statement from a parent, so its chain is itself alone, which no root anchor verifies. It asks its parent (<code>REGISTRY_PARENT_URL</code>) at start and retries until the parent has registered it (<code>POST /v1/registries</code> at the parent).</p>`;
  }
  return html`<h3>Chain, root first</h3>
    <${ChainPath} chain=${chain} statements=${statements} here=${registryId} />
    <p class="small">Parent: <code>${chain.at(-2)}</code>. The parent renews its statement about this registry before it expires; an expired one means the parent has not been reached, or has revoked this registry.</p>
    <h3>Delegation statements</h3>
    <${StatementTable} statements=${statements} caption="Each statement is signed by the registry before it in the chain; decoded here for reading. Trust verifies them." />
    <p class="small"><a href=${bundleHref(registryId)}>Verify this registry's trust bundle</a></p>`;
}

function ChildTable({ children, first, tier }: { children: readonly RegistryRecord[]; first: boolean; tier: string | undefined }): View {
  if (children.length === 0) {
    if (!first) return html`<${Empty}>No more child registries.<//>`;
    const childTier = tier === 'root' ? 'sovereign registry (one per country)' : tier === 'sovereign' ? 'organisational registry of this country' : undefined;
    return html`<${Empty}>
      ${childTier
        ? html`No child registry is registered here yet. A ${childTier} is registered with <code>POST /v1/registries</code> (an administrator's key; its trust anchors, keys and address), and then fetches its delegation from this registry; see docs/federation.md.`
        : 'An organisational registry accepts no child registry: it is the last tier of the federation.'}
    <//>`;
  }
  return html`<div class="table-wrap"><table>
    <caption class="muted small">The registries this one delegated to, oldest first. A revoked registry gets no further delegation statement.</caption>
    <thead><tr><th scope="col">Registry</th><th scope="col">Status</th><th scope="col">Actions</th></tr></thead>
    <tbody>${children.map((child) => html`<tr data-registry-id=${child.registry_id}>
      <td>
        <strong>${child.display_name}</strong>
        <div><code class="small">${child.registry_id}</code></div>
        <div class="small">${child.tier} registry · ${child.jurisdiction}</div>
        <div class="small">${child.api_base_url ? html`<code>${child.api_base_url}</code>` : html`<span class="muted">no address: not asked in federated discovery</span>`}</div>
        <div class="muted small">registered <${Time} at=${child.created_at} /></div>
        <${ChildKeys} child=${child} />
      </td>
      <td>
        <${Badge} state=${child.status} />
        ${child.status === 'revoked' &&
        html`<div class="small">on <${Time} at=${child.revoked_at} /></div>${child.revocation_reason && html`<div class="small">Reason: ${child.revocation_reason}</div>`}`}
      </td>
      <td>
        <div class="actions">
          ${child.status === 'active' && html`<a class="button danger" href=${revokeHref(child.registry_id)} aria-label=${`Revoke ${child.display_name}`}>Revoke</a>`}
          ${child.status === 'active' && html`<a href=${bundleHref(child.registry_id)} aria-label=${`Verify the trust bundle of ${child.display_name}`}>Verify bundle</a>`}
        </div>
      </td>
    </tr>`)}</tbody>
  </table></div>`;
}

/** The keys a child was registered with, each with its window; folded away behind a count. */
function ChildKeys({ child }: { child: RegistryRecord }): View {
  const anchors = child.trust_anchors;
  const live = anchors.filter((anchor) => !anchor.not_after || Date.parse(anchor.not_after) > Date.now()).length;
  return html`<details>
    <summary>Keys: ${anchors.length} pinned, ${live} in force</summary>
    <ul class="small">${anchors.map((anchor) => html`<li>
      <code>${anchor.key_id}</code> ${anchor.alg} <${KeyBadge} notBefore=${anchor.not_before} notAfter=${anchor.not_after} /><br />
      <${Window} from=${anchor.not_before} until=${anchor.not_after} />
    </li>`)}</ul>
  </details>`;
}

async function confirmRevocation(
  request: FastifyRequest,
  reply: FastifyReply,
  id: string,
  state: { idempotencyKey?: string; failed?: Failure; reason?: string } = {},
) {
  const answer = await request.registry.getRegistry(id);
  if (credentialRefused(request, answer)) return signInAgain(request, reply);
  if (!answer.ok) {
    return sendPage(request, reply, { page: 'federation', title: 'Child registry', status: failureStatus(answer) }, html`
      <${Problem} envelope=${answer.envelope} status=${answer.status} />
      <p><a href="/federation">Back to federation</a></p>`);
  }
  const child = answer.body;
  return sendPage(
    request,
    reply,
    { page: 'federation', title: `Revoke ${child.display_name}?`, status: state.failed ? failureStatus(state.failed) : 200 },
    html`
      ${state.failed && html`<${Problem} envelope=${state.failed.envelope} status=${state.failed.status} />`}
      ${child.status !== 'active'
        ? html`<p role="alert">${child.display_name} (<code>${child.registry_id}</code>) was revoked on <${Time} at=${child.revoked_at} />; there is nothing more to do. <a href="/federation">Back to federation</a></p>`
        : html`<form method="post" action="/federation/revoke" class="panel stack narrow" aria-label=${`Revoke ${child.display_name}`}>
            <p>
              You are about to revoke <strong>${child.display_name}</strong> (<code>${child.registry_id}</code>), a ${child.tier} registry for ${child.jurisdiction}${child.api_base_url ? html` at <code>${child.api_base_url}</code>` : ''}.
            </p>
            <p>
              This registry then issues it no further delegation statement and its signed status says revoked, so online checks fail at once and offline
              copies of its chain lapse when their statements expire. It stops giving routing advice and trust bundles, and federated discovery no longer asks it.${' '}
              <strong>This cannot be undone:</strong> its URI can never be registered again.
            </p>
            <${CsrfField} reply=${reply} />
            <input type="hidden" name="registry" value=${child.registry_id} />
            <input type="hidden" name="idempotency_key" value=${state.idempotencyKey ?? randomUUID()} />
            <label for="reason">Reason</label>
            <textarea id="reason" name="reason" maxlength="500" required aria-describedby="reason-help">${state.reason ?? ''}</textarea>
            <p id="reason-help" class="muted small">Recorded with the revocation and in the transparency ledger. Do not include patient details.</p>
            <div class="actions">
              <button type="submit" class="danger">Revoke ${child.display_name}</button>
              <a href="/federation">Cancel</a>
            </div>
          </form>`}
    `,
  );
}
