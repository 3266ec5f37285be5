/**
 * The registry signs its discovery and routing answers (contract §4, docs/discovery.md): with
 * response signing on, the body carries `signed_response`, a compact JWS by the registry's current
 * key, typed `ward-discovery+jwt` over `{query, results, result_count, iss, iat}` (and `federation`
 * when present) or `ward-routing+jwt` over the routing advice without that field. The console checks
 * it on its own server, against the keys the registry publishes at `/.well-known/jwks.json`, with the
 * registry's own key-set verifier (`verifyWithKeySet` in src/registry/trust/key-set.ts: the `kid`
 * must name a published key inside its validity window, the alg must be one a registry signs with,
 * and a key offered by the JWS header is never used). The signed payload must then be the answer the
 * page shows, field for field: a signature over something else verifies nothing about this answer.
 */
import { isDeepStrictEqual } from 'node:util';
import type { RegistryAnswer } from '../../client/registry-client.ts';
import type { PublishedJwk } from '../../registry/federation/delegation-statement.ts';
import { DISCOVERY_TYP } from '../../registry/federation/federated-discovery.ts';
import { ROUTING_TYP } from '../../registry/routing/routing-service.ts';
import { offeredKeyMembers, readProtectedHeader, verifyWithKeySet } from '../../registry/trust/key-set.ts';
import { html, type View } from '../views/html.ts';
import { Badge, Facts, Time } from '../views/parts.ts';

export { DISCOVERY_TYP };
/** `typ` of a signed routing answer (src/registry/routing/routing-service.ts). */
export { ROUTING_TYP };

export type SignatureCheck = {
  state: 'verified' | 'failed' | 'unsigned';
  /** Why it failed, or why there is nothing to check; absent when verified. */
  reason?: string;
  kid?: string | undefined;
  alg?: string | undefined;
  typ?: string | undefined;
  /** `iss` and `iat` of a signed discovery answer (routing advice carries neither). */
  iss?: string | undefined;
  issuedAt?: string | undefined;
};

type JwksAnswer = RegistryAnswer<{ keys: Array<Record<string, unknown>> }>;

/**
 * Checks the `signed_response` inside `text` (the answer's body exactly as received) against the
 * registry's JWKS. `typ` is what the answer must be signed as; `extraClaims` are the members the
 * signature covers beyond the answer itself (`iss`, `iat` for discovery).
 */
export async function checkSignedAnswer(text: string, typ: string, jwks: JwksAnswer, now: Date, extraClaims: readonly string[] = []): Promise<SignatureCheck> {
  let body: Record<string, unknown>;
  try {
    body = JSON.parse(text) as Record<string, unknown>;
  } catch {
    return { state: 'failed', reason: 'The answer is not JSON.' };
  }
  const { signed_response: token, ...answer } = body;
  if (token === undefined) {
    return { state: 'unsigned', reason: 'The registry did not sign this answer (it runs with REGISTRY_SIGN_RESPONSES=false), so nothing vouches for it beyond this connection.' };
  }
  const header = readProtectedHeader(token);
  if (!header) return { state: 'failed', reason: 'signed_response is not a compact JWS with a readable header.' };
  const seen = { kid: typeof header.kid === 'string' ? header.kid : undefined, alg: typeof header.alg === 'string' ? header.alg : undefined, typ: typeof header.typ === 'string' ? header.typ : undefined };
  if (header.typ !== typ) return { ...seen, state: 'failed', reason: `The JWS is typed ${String(header.typ ?? 'nothing')}, not ${typ}: it is not a signature over this kind of answer.` };
  const offered = offeredKeyMembers(header);
  if (offered.length > 0) return { ...seen, state: 'failed', reason: `The JWS names a key of its own (${offered.join(', ')}); a key offered by the signature itself is never trusted.` };
  if (!jwks.ok) return { ...seen, state: 'failed', reason: `The registry's public keys could not be read (${jwks.envelope.error.message}), so the signature could not be checked.` };
  const verified = await verifyWithKeySet(token as string, header, (jwks.body.keys ?? []) as PublishedJwk[], now);
  if (!verified.ok) return { ...seen, state: 'failed', reason: `The signature does not verify against the registry's published keys: ${verified.message}.` };
  const payload = verified.payload as Record<string, unknown>;
  const claims = Object.fromEntries(extraClaims.map((claim) => [claim, payload[claim]]));
  const signed = Object.fromEntries(Object.entries(payload).filter(([name]) => !extraClaims.includes(name)));
  const issuedAt = typeof claims.iat === 'number' ? new Date(claims.iat * 1000).toISOString() : undefined;
  const about = { ...seen, iss: typeof claims.iss === 'string' ? claims.iss : undefined, issuedAt };
  if (!isDeepStrictEqual(signed, answer)) {
    return { ...about, state: 'failed', reason: 'The signature is genuine but covers a different answer from the one shown: the answer was changed after it was signed.' };
  }
  return { ...about, state: 'verified' };
}

/** What the page shows about the signature: the verdict first, then the key and why. */
export function SignatureReport({ check, subject }: { check: SignatureCheck; subject: string }): View {
  const badge =
    check.state === 'verified'
      ? html`<${Badge} state="verified" label="Signature verified" />`
      : check.state === 'unsigned'
        ? html`<${Badge} state="unknown" label="Not signed" />`
        : html`<${Badge} state="failed" label="Signature NOT verified" />`;
  return html`<div class="stack" data-signature=${check.state}>
    <p>${badge} ${check.state === 'verified' ? `The registry signed ${subject}, and it is exactly what this page shows. Checked by the console against the registry's published keys.` : ''}</p>
    ${check.reason && html`<p role=${check.state === 'failed' ? 'alert' : undefined} class=${check.state === 'failed' ? 'problem' : 'muted'}>${check.reason}</p>`}
    ${check.state !== 'unsigned' &&
    html`<${Facts} items=${[
      ['Key id (kid)', check.kid ? html`<code>${check.kid}</code>` : '—'],
      ['Algorithm', check.alg ?? '—'],
      ['Type (typ)', check.typ ? html`<code>${check.typ}</code>` : '—'],
      ...(check.issuedAt ? ([['Signed at (iat)', html`<${Time} at=${check.issuedAt} />`]] as const) : []),
      ...(check.iss ? ([['Issuer (iss)', html`<code>${check.iss}</code>`]] as const) : []),
    ]} />`}
  </div>`;
}
