/**
 * `/trust`: the registry's trust anchors and published keys (with their validity windows), the
 * rotation of its signing key (confirmed on a page of its own, sent once with an idempotency key),
 * and the trust bundle of any agent or registry, fetched from the registry and verified here, in the
 * console's server, with the shipped verifier (`verifyTrustBundle`), step by step.
 *
 * Which anchor the console verifies with. A bundle verifies against the ROOT of its chain
 * (`delegation_chain[0]`). The registry's `/v1/trust/anchors` lists only that registry's own keys
 * (`src/registry/federation/trust-routes.ts`: its signer's published keys, with the role of its own tier), so the
 * root's keys can be found there only when this registry is the root of the chain:
 *  - at a root registry (or any registry that is the first link of the bundle's chain, i.e. its own
 *    trust anchor) the anchor is this registry's JWKS (`/.well-known/jwks.json`, retiring keys
 *    included, so what they signed still verifies) with `registry_id` from its metadata;
 *  - at a sovereign or organisational registry the root's keys are nowhere in this registry's API
 *    (taking them from the statements themselves would be circular, and fetching a root URL named by
 *    the person from the console's server would let the console be pointed at any address). The
 *    console then verifies only with a root anchor the person pastes into the form (the root's
 *    `/.well-known/jwks.json`, or `{jwks, registry_id}`, as `ward trust verify --anchor` takes it);
 *    without one it says plainly that the bundle was not verified, and why.
 */
import { randomUUID } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { decodeProtectedHeader } from 'jose';
import type { PublishedJwk } from '../../core/crypto/key-set.ts';
import { verifyTrustBundle, type BundleVerification, type TrustAnchorInput } from '../../client/trust/bundle-verifier.ts';
import { html, type View } from '../views/html.ts';
import { Badge, Empty, Facts, Problem, Section, Time, duration } from '../views/parts.ts';
import { sendPage } from '../views/send-page.ts';
import { ChainPath, JsonDetails, KeyBadge, VerificationSteps, Window } from '../views/trust-parts.ts';
import { CsrfField, credentialRefused, failureStatus, firstFailure, keepNotice, selfUrl, sendPageWithNotice, signInAgain, text, type Failure } from './page-kit.ts';

type TrustQuery = { subject?: string; anchor?: string };
type RotateFields = { alg?: string; retire_after_seconds?: string };

const ALGS = ['ES256', 'EdDSA', 'RS256'] as const;
type Alg = (typeof ALGS)[number];
const MAX_RETIRE_SECONDS = 30 * 86_400;
const DEFAULT_RETIRE_SECONDS = 86_400;
const RETIRE_CHOICES: ReadonlyArray<readonly [number, string]> = [
  [86_400, '1 day (recommended)'],
  [7 * 86_400, '7 days'],
  [30 * 86_400, '30 days (the most allowed)'],
  [0, 'No time: the old key is compromised'],
];
/** Members only private or symmetric keys carry (RFC 7518 §6): a pasted anchor holding one is refused. */
const PRIVATE_MEMBERS = ['d', 'p', 'q', 'dp', 'dq', 'qi', 'oth', 'k'];
const MAX_ANCHOR_CHARS = 16_000;

export function registerTrustPage(app: FastifyInstance): void {
  app.get<{ Querystring: TrustQuery }>('/trust', async (request, reply) => trustPage(request, reply));
  app.get<{ Querystring: RotateFields }>('/trust/rotate', async (request, reply) => confirmRotation(request, reply, request.query));
  app.post<{ Body: RotateFields & { idempotency_key?: string } }>('/trust/rotate', async (request, reply) => {
    const fields = request.body ?? {};
    const choice = readRotation(fields);
    const idempotencyKey = text(fields.idempotency_key) ?? randomUUID();
    if (typeof choice === 'string') return confirmRotation(request, reply, fields, { idempotencyKey });
    const answer = await request.registry.rotateSigningKey(
      { ...(choice.alg ? { alg: choice.alg } : {}), retire_after_seconds: choice.retireAfterSeconds },
      { idempotencyKey },
    );
    if (credentialRefused(request, answer)) return signInAgain(request, reply);
    // A failure goes back to the confirmation with the same key: sending it again acts at most once.
    if (!answer.ok) return confirmRotation(request, reply, fields, { idempotencyKey, failed: answer });
    const { key_id: kid, alg, previous } = answer.body;
    keepNotice(
      request,
      `The signing key was rotated. The registry now signs with key ${kid} (${alg}).` +
        (previous ? ` The previous key ${previous.key_id} stays published until ${utc(previous.not_after)}.` : ''),
    );
    return reply.redirect('/trust', 303);
  });
}

const utc = (at: string) => `${at.replace('T', ' ').replace(/\.\d+Z$|Z$/, '')} UTC`;

/** The key the registry signs with now: the `kid` of its signed metadata (re-signed at each rotation). */
function signingKid(metadata: Record<string, unknown>): string | undefined {
  try {
    const kid = decodeProtectedHeader(String(metadata.signed_metadata ?? '')).kid;
    return typeof kid === 'string' ? kid : undefined;
  } catch {
    return undefined;
  }
}

type Verdict =
  | { kind: 'verified'; anchor: string; verification: BundleVerification }
  | { kind: 'unanchored'; root: string }
  | { kind: 'bad-anchor'; message: string };

async function trustPage(request: FastifyRequest<{ Querystring: TrustQuery }>, reply: FastifyReply) {
  const subject = text(request.query.subject);
  const pastedAnchor = text(request.query.anchor);
  const [metadata, jwks, anchors, bundle] = await Promise.all([
    request.registry.metadata(),
    request.registry.jwks(),
    request.registry.trustAnchors(),
    subject ? request.registry.trustBundle(subject) : undefined,
  ]);
  if (credentialRefused(request, metadata, jwks, anchors, ...(bundle ? [bundle] : []))) return signInAgain(request, reply);
  const live = selfUrl(request);
  if (!metadata.ok && metadata.status === null) {
    return sendPage(request, reply, { page: 'trust', title: 'Trust', live: true, status: failureStatus(metadata) }, html`
      <${Section} id="trust-problem" title="Registry" live=${live}><${Problem} envelope=${metadata.envelope} status=${metadata.status} /><//>`);
  }
  const registryId = metadata.ok ? String(metadata.body.registry_id ?? '') : undefined;
  const tier = metadata.ok ? String(metadata.body.tier ?? '') : undefined;
  const signing = metadata.ok ? signingKid(metadata.body) : undefined;
  const currentAlg = jwks.ok ? String(jwks.body.keys.find((key) => key.kid === signing)?.alg ?? '') : '';
  const verdict = bundle?.ok ? await verdictOf(bundle.body, { registryId, jwks: jwks.ok ? jwks.body : undefined, pastedAnchor }) : undefined;
  // The page's status is that of the one thing asked for: the bundle when a subject was given.
  const failed = (bundle && !bundle.ok ? bundle : undefined) ?? firstFailure(metadata, jwks, anchors);
  const isRoot = tier === 'root';

  return sendPageWithNotice(
    request,
    reply,
    { page: 'trust', title: 'Trust', live: true, status: failed ? failureStatus(failed) : 200 },
    html`
      <${Section} id="trust-verify" title="Verify a trust bundle">
        <form method="get" action="/trust" class="stack narrow" aria-label="Verify a trust bundle">
          <label for="subject">Agent or registry URI</label>
          <input id="subject" name="subject" value=${subject ?? ''} required maxlength="256" spellcheck="false" autocomplete="off"
            placeholder="registry://gb/agents/…" aria-describedby="subject-help" />
          <p id="subject-help" class="muted small">
            The registry issues the bundle; this console checks it with the shipped verifier against
            ${isRoot ? ' this registry\u2019s own keys (it is the root).' : ' the root anchor below.'}
          </p>
          ${!isRoot &&
          html`<label for="anchor">Root anchor (optional)</label>
            <textarea id="anchor" name="anchor" maxlength=${MAX_ANCHOR_CHARS} spellcheck="false" aria-describedby="anchor-help">${pastedAnchor ?? ''}</textarea>
            <p id="anchor-help" class="muted small">
              This registry is ${tier ? `${/^[aeiou]/i.test(tier) ? 'an' : 'a'} ${tier}` : 'not a root'} registry and publishes only its own keys, so the root's are not known here.
              Paste the root registry's public JWKS (its <code>/.well-known/jwks.json</code>), or <code>{"jwks": …, "registry_id": …}</code>.
            </p>`}
          <div class="actions"><button type="submit">Verify</button></div>
        </form>
      <//>
      ${subject &&
      html`<${Section} id="trust-bundle" title="Bundle verification" live=${live}>
        ${bundle && !bundle.ok
          ? html`<${Problem} envelope=${bundle.envelope} status=${bundle.status} />`
          : bundle?.ok && verdict && html`<${BundleResult} bundle=${bundle.body} verdict=${verdict} registryId=${registryId} />`}
      <//>`}
      <${Section} id="trust-anchors" title="Trust anchors" live=${live}>
        ${anchors.ok ? html`<${AnchorTable} anchors=${anchors.body.anchors} signing=${signing} />` : html`<${Problem} envelope=${anchors.envelope} status=${anchors.status} />`}
      <//>
      <${Section} id="trust-jwks" title="Published keys (JWKS)" live=${live}>
        ${jwks.ok ? html`<${JwksTable} keys=${jwks.body.keys} signing=${signing} />` : html`<${Problem} envelope=${jwks.envelope} status=${jwks.status} />`}
      <//>
      <${Section} id="trust-rotate" title="Rotate the signing key">
        <form method="get" action="/trust/rotate" class="stack narrow" aria-label="Rotate the signing key">
          <p>
            ${signing ? html`The registry signs with key <code>${signing}</code>${currentAlg ? ` (${currentAlg})` : ''}. ` : ''}
            Rotation makes a new key sign at once; the old public key stays published for the time chosen below, so what it signed keeps verifying until then.
          </p>
          <label for="alg">Algorithm of the new key</label>
          <select id="alg" name="alg">
            <option value="">${currentAlg ? `Same as now (${currentAlg})` : 'Same as now'}</option>
            ${ALGS.map((alg) => html`<option value=${alg}>${alg}</option>`)}
          </select>
          <label for="retire_after_seconds">Keep the old public key published for</label>
          <select id="retire_after_seconds" name="retire_after_seconds" aria-describedby="retire-help">
            ${RETIRE_CHOICES.map(([seconds, label]) => html`<option value=${String(seconds)} selected=${seconds === DEFAULT_RETIRE_SECONDS}>${label}</option>`)}
          </select>
          <p id="retire-help" class="muted small">Keep it longer than the one-hour bundles and the delegation statements it signed. “No time” is for a compromised key: what it signed stops verifying within a minute.</p>
          <div class="actions"><button type="submit" class="secondary">Rotate the signing key…</button></div>
        </form>
      <//>
    `,
  );
}

/** Verifies the bundle against the anchor chosen as the header of this file explains. */
async function verdictOf(
  bundle: Record<string, unknown> & { delegation_chain: string[] },
  context: { registryId: string | undefined; jwks: { keys: Array<Record<string, unknown>> } | undefined; pastedAnchor: string | undefined },
): Promise<Verdict> {
  try {
    return await chooseAnchorAndVerify(bundle, context);
  } catch (error) {
    // The verifier reports what it finds; it throws only on an anchor it cannot use at all.
    return { kind: 'bad-anchor', message: `The bundle could not be checked with this anchor: ${error instanceof Error ? error.message : String(error)}` };
  }
}

async function chooseAnchorAndVerify(
  bundle: Record<string, unknown> & { delegation_chain: string[] },
  context: { registryId: string | undefined; jwks: { keys: Array<Record<string, unknown>> } | undefined; pastedAnchor: string | undefined },
): Promise<Verdict> {
  const root = bundle.delegation_chain[0] ?? '?';
  if (context.pastedAnchor) {
    const anchor = readAnchor(context.pastedAnchor);
    if (typeof anchor === 'string') return { kind: 'bad-anchor', message: anchor };
    return { kind: 'verified', anchor: `the root anchor you pasted${anchor.registry_id ? ` (${anchor.registry_id})` : ''}`, verification: await verifyTrustBundle(bundle, anchor) };
  }
  if (context.registryId && context.jwks && root === context.registryId) {
    const anchor: TrustAnchorInput = { jwks: { keys: context.jwks.keys as PublishedJwk[] }, registry_id: context.registryId };
    return { kind: 'verified', anchor: `this registry's own keys (${context.registryId}, the root of the chain)`, verification: await verifyTrustBundle(bundle, anchor) };
  }
  return { kind: 'unanchored', root };
}

/** A pasted anchor: a bare JWKS or `{jwks, registry_id?}`; the reason in words when it is neither. */
function readAnchor(value: string): TrustAnchorInput | string {
  if (value.length > MAX_ANCHOR_CHARS) return `The root anchor is longer than ${MAX_ANCHOR_CHARS} characters.`;
  let parsed: unknown;
  try {
    parsed = JSON.parse(value);
  } catch {
    return 'The root anchor is not JSON. Paste the root registry\u2019s /.well-known/jwks.json as it is.';
  }
  const object = (typeof parsed === 'object' && parsed !== null ? parsed : {}) as { keys?: unknown; jwks?: { keys?: unknown }; registry_id?: unknown };
  const keys = Array.isArray(object.keys) ? object.keys : Array.isArray(object.jwks?.keys) ? object.jwks.keys : undefined;
  if (!keys || keys.length === 0 || !keys.every((key) => typeof key === 'object' && key !== null && !Array.isArray(key))) {
    return 'The root anchor must be a JWKS ({"keys": [...]}, at least one key) or {"jwks": {"keys": [...]}, "registry_id": "registry://…"}.';
  }
  if (keys.some((key) => PRIVATE_MEMBERS.some((member) => member in (key as object)))) {
    return 'The root anchor holds private key material. Paste the public JWKS only, and replace that key: it has left its owner.';
  }
  const registryId = Array.isArray(object.keys) ? undefined : object.registry_id;
  return { jwks: { keys: keys as PublishedJwk[] }, ...(typeof registryId === 'string' ? { registry_id: registryId } : {}) };
}

function BundleResult({ bundle, verdict, registryId }: { bundle: Record<string, unknown> & { delegation_chain: string[]; statements: string[] }; verdict: Verdict; registryId: string | undefined }): View {
  const facts: Array<readonly [string, View]> = [
    ['Subject', html`<code>${String(bundle.subject)}</code>`],
    ['Issuer', html`<code>${String(bundle.issuer)}</code>`],
    ['Trust level', String(bundle.trust_level ?? '—')],
    ['Issued', html`<${Time} at=${String(bundle.issued_at)} />`],
    ['Expires', html`<${Time} at=${String(bundle.expires_at)} />`],
  ];
  return html`
    ${verdict.kind === 'verified' && verdict.verification.valid &&
    html`<p class="verdict" data-verdict="verified"><${Badge} state="passed" label="Verified" /> Every step passed: the bundle verifies against ${verdict.anchor}.</p>`}
    ${verdict.kind === 'verified' && !verdict.verification.valid &&
    html`<p class="verdict" data-verdict="failed"><${Badge} state="failed" label="Not verified" /> ${verdict.verification.errors.length} problem(s) found checking against ${verdict.anchor}. Do not rely on this bundle.</p>`}
    ${verdict.kind === 'unanchored' &&
    html`<p class="verdict" data-verdict="unanchored"><${Badge} state="skipped" label="Not verified" /> The chain starts at <code>${verdict.root}</code>, whose keys this registry does not publish. Paste that root's JWKS as the root anchor above to verify it.</p>`}
    ${verdict.kind === 'bad-anchor' && html`<p class="problem" role="alert" data-verdict="bad-anchor">${verdict.message}</p>`}
    <${Facts} items=${facts} />
    <h3>Delegation chain</h3>
    <${ChainPath} chain=${bundle.delegation_chain} statements=${bundle.statements} here=${registryId} />
    ${verdict.kind === 'verified' && html`<h3>Steps</h3><${VerificationSteps} verification=${verdict.verification} />`}
    <${JsonDetails} summary="The bundle as the registry sent it (JSON)" value=${bundle} />
  `;
}

type Anchor = { key_id: string; alg: string; role: string; jwks_uri: string; not_before: string; not_after: string | null };

function AnchorTable({ anchors, signing }: { anchors: readonly Anchor[]; signing: string | undefined }): View {
  if (anchors.length === 0) return html`<${Empty}>The registry lists no trust anchor.<//>`;
  const uris = [...new Set(anchors.map((anchor) => anchor.jwks_uri))];
  return html`<div class="table-wrap"><table>
      <caption class="muted small">What a client pins to trust this registry: one row per published signing key.</caption>
      <thead><tr><th scope="col">Key id (SHA-256 thumbprint)</th><th scope="col">Alg</th><th scope="col" class="hide-narrow">Role</th><th scope="col">Validity</th><th scope="col">State</th></tr></thead>
      <tbody>${anchors.map((anchor) => html`<tr data-kid=${anchor.key_id}>
        <td><code>${anchor.key_id}</code></td>
        <td>${anchor.alg}</td>
        <td class="hide-narrow">${anchor.role.replace(/_/g, ' ')}</td>
        <td><${Window} from=${anchor.not_before} until=${anchor.not_after} /></td>
        <td><${KeyBadge} notBefore=${anchor.not_before} notAfter=${anchor.not_after} signing=${signing === undefined ? undefined : anchor.key_id === signing} /></td>
      </tr>`)}</tbody>
    </table></div>
    <p class="muted small">Keys published at ${uris.map((uri, index) => html`${index > 0 ? ', ' : ''}<code>${uri}</code>`)}.</p>`;
}

function JwksTable({ keys, signing }: { keys: ReadonlyArray<Record<string, unknown>>; signing: string | undefined }): View {
  if (keys.length === 0) return html`<${Empty}>The registry publishes no key.<//>`;
  return html`<div class="table-wrap"><table>
      <caption class="muted small">The registry's <code>/.well-known/jwks.json</code>. A retiring key signs nothing new but still verifies what it signed until its end.</caption>
      <thead><tr><th scope="col">kid</th><th scope="col">Alg</th><th scope="col" class="hide-narrow">Key</th><th scope="col">Validity</th><th scope="col">State</th></tr></thead>
      <tbody>${keys.map((key) => html`<tr data-kid=${String(key.kid ?? '')}>
        <td><code>${String(key.kid ?? '—')}</code>${key.kid === signing && html` <${Badge} state="active" label="signs now" />`}</td>
        <td>${String(key.alg ?? '—')}</td>
        <td class="hide-narrow">${String(key.kty ?? '?')}${key.crv ? ` ${String(key.crv)}` : ''}${key.use ? html`<span class="muted small"> · use ${String(key.use)}</span>` : ''}</td>
        <td><${Window} from=${key.not_before} until=${key.not_after} /></td>
        <td><${KeyBadge} notBefore=${key.not_before} notAfter=${key.not_after} signing=${signing === undefined ? undefined : key.kid === signing} /></td>
      </tr>`)}</tbody>
    </table></div>
    <${JsonDetails} summary="The JWKS as published (JSON)" value=${{ keys }} />`;
}

type Rotation = { alg: Alg | undefined; retireAfterSeconds: number };

/** The rotation asked for, or what is wrong with it. */
function readRotation(fields: RotateFields): Rotation | string {
  const alg = text(fields.alg);
  if (alg !== undefined && !(ALGS as readonly string[]).includes(alg)) return `The algorithm must be one of ${ALGS.join(', ')}.`;
  const seconds = text(fields.retire_after_seconds);
  const retireAfterSeconds = seconds === undefined ? DEFAULT_RETIRE_SECONDS : /^\d{1,8}$/.test(seconds) ? Number(seconds) : Number.NaN;
  if (!(retireAfterSeconds >= 0 && retireAfterSeconds <= MAX_RETIRE_SECONDS)) return `How long the old key stays published must be a whole number of seconds from 0 to ${MAX_RETIRE_SECONDS}.`;
  return { alg: alg as Alg | undefined, retireAfterSeconds };
}

async function confirmRotation(
  request: FastifyRequest,
  reply: FastifyReply,
  fields: RotateFields,
  state: { idempotencyKey?: string; failed?: Failure } = {},
) {
  const [metadata, jwks] = await Promise.all([request.registry.metadata(), request.registry.jwks()]);
  if (credentialRefused(request, metadata, jwks)) return signInAgain(request, reply);
  const title = 'Rotate the signing key?';
  if (!metadata.ok) return sendPage(request, reply, { page: 'trust', title, status: failureStatus(metadata) }, html`<${Problem} envelope=${metadata.envelope} status=${metadata.status} /><p><a href="/trust">Back to trust</a></p>`);
  const choice = readRotation(fields);
  if (typeof choice === 'string') {
    return sendPage(request, reply, { page: 'trust', title, status: 422 }, html`<p class="problem" role="alert">${choice}</p><p><a href="/trust">Back to trust</a></p>`);
  }
  const registryId = String(metadata.body.registry_id ?? '');
  const signing = signingKid(metadata.body);
  const current = jwks.ok ? jwks.body.keys.find((key) => key.kid === signing) : undefined;
  const alg = choice.alg ?? String(current?.alg ?? 'the current algorithm');
  const retireAt = new Date(Date.now() + choice.retireAfterSeconds * 1000).toISOString();
  return sendPage(
    request,
    reply,
    { page: 'trust', title, status: state.failed ? failureStatus(state.failed) : 200 },
    html`
      ${state.failed && html`<${Problem} envelope=${state.failed.envelope} status=${state.failed.status} />`}
      <form method="post" action="/trust/rotate" class="panel stack narrow" aria-label="Confirm the rotation">
        <p>
          You are about to rotate the signing key of <strong><code>${registryId}</code></strong>.
          A new ${alg} key signs from now on${signing ? html`; the current key <code>${signing}</code> signs nothing more` : ''}.
        </p>
        ${choice.retireAfterSeconds === 0
          ? html`<p><strong>The old key is withdrawn at once:</strong> bundles, statements and answers it signed stop verifying within a minute, and children verify again only after their next fetch. Use this for a compromised key only.</p>`
          : html`<p>The old public key stays published for ${duration(choice.retireAfterSeconds)}, until about <${Time} at=${retireAt} />, so what it signed keeps verifying until then. Child registries learn of the new key on their next fetch.</p>`}
        <${CsrfField} reply=${reply} />
        <input type="hidden" name="alg" value=${choice.alg ?? ''} />
        <input type="hidden" name="retire_after_seconds" value=${String(choice.retireAfterSeconds)} />
        <input type="hidden" name="idempotency_key" value=${state.idempotencyKey ?? randomUUID()} />
        <div class="actions">
          <button type="submit" class="danger">Rotate the signing key now</button>
          <a href="/trust">Cancel</a>
        </div>
      </form>
    `,
  );
}
