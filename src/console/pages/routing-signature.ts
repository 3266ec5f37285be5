/**
 * The registry signs its discovery and routing answers (contract §4, docs/discovery.md). The console
 * shows an answer together with the verdict on its signature, so it asks the registry with
 * `verifySignatures: false` and checks each answer itself, on its own server, with the registry
 * client's verifier (`verifySignedAnswer` in src/client/signed-answer.ts: the `kid` must name a key
 * the registry publishes at `/.well-known/jwks.json`, inside its validity window, the alg must be one a
 * registry signs with, a key offered by the JWS header is never used, and the signed payload must be
 * the answer the page shows, field for field). A failed or missing signature is then shown beside the
 * answer rather than in place of it.
 */
import type { RegistryAnswer } from '../../client/registry-client.ts';
import { verifySignedAnswer, type AnswerKind } from '../../client/signed-answer.ts';
import type { PublishedJwk } from '../../core/crypto/key-set.ts';
import { html, type View } from '../views/html.ts';
import { Badge, Facts, Time } from '../views/parts.ts';

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
 * Checks the `signed_response` inside `text` (the answer's body exactly as received) as a signed
 * answer of `kind`, against the registry's JWKS as the console read it.
 */
export async function checkSignedAnswer(text: string, kind: AnswerKind, jwks: JwksAnswer, now: Date): Promise<SignatureCheck> {
  const verified = await verifySignedAnswer(text, kind, jwks.ok ? ((jwks.body.keys ?? []) as PublishedJwk[]) : [], now);
  if (verified.ok) {
    const { kid, alg, typ, iss, iat } = verified.signature;
    return { state: 'verified', kid, alg, typ, iss, issuedAt: iat === undefined ? undefined : new Date(iat * 1000).toISOString() };
  }
  const seen = { kid: verified.kid, alg: verified.alg, typ: verified.typ };
  if (verified.problem === 'unsigned') return { state: 'unsigned', reason: verified.reason };
  // Checked first by the verifier, these hold whatever the keys: only a signature check needs them.
  const keysNeeded = !['not-json', 'malformed', 'wrong-type', 'key-offered'].includes(verified.problem);
  if (keysNeeded && !jwks.ok) {
    return { ...seen, state: 'failed', reason: `The registry's public keys could not be read (${jwks.envelope.error.message}), so the signature could not be checked.` };
  }
  return { ...seen, state: 'failed', reason: verified.reason };
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
