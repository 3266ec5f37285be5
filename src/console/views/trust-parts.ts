/**
 * Pieces the `/trust` and `/federation` pages share: a key's validity window and its state, a
 * delegation statement decoded for reading, and the steps of a trust-bundle verification. Decoding
 * here is for display only: nothing shown as "valid" from a decoded statement is a verification; the
 * verification is `verifyTrustBundle`'s, and its steps say so.
 */
import { decodeJwt, decodeProtectedHeader } from 'jose';
import type { BundleVerification } from '../../client/trust/bundle-verifier.ts';
import { html, type View } from './html.ts';
import { Badge, Time } from './parts.ts';

export type KeyState = { state: 'valid' | 'expiring' | 'expired' | 'pending'; label: 'current' | 'retiring' | 'expired' | 'not yet valid' };

/**
 * Where a key stands in its window. Every key now has a `not_after` (its validity window, renewed by
 * rotation before it ends), so what tells the key that signs from one that is retiring is `signing`,
 * when the page knows which key signs: that one is `current`, another inside its window `retiring`.
 * Without it (another registry's keys), a key inside its window is `current`, and one with no
 * `not_after` (published before keys had windows) too. Past its end, `expired`.
 */
export function keyState(notBefore: unknown, notAfter: unknown, signing?: boolean, now: number = Date.now()): KeyState {
  if (typeof notBefore === 'string' && Date.parse(notBefore) > now) return { state: 'pending', label: 'not yet valid' };
  if (typeof notAfter === 'string' && Date.parse(notAfter) <= now) return { state: 'expired', label: 'expired' };
  if (signing === false) return { state: 'expiring', label: 'retiring' };
  return { state: 'valid', label: 'current' };
}

export function KeyBadge({ notBefore, notAfter, signing }: { notBefore: unknown; notAfter: unknown; signing?: boolean }): View {
  const { state, label } = keyState(notBefore, notAfter, signing);
  return html`<${Badge} state=${state} label=${label} />`;
}

/** `from … until …`, an open end said in words. */
export function Window({ from, until }: { from: unknown; until: unknown }): View {
  return html`<${Time} at=${typeof from === 'string' ? from : null} />${' to '}${typeof until === 'string' ? html`<${Time} at=${until} />` : html`<span class="muted">open-ended</span>`}`;
}

const isoOf = (seconds: unknown) => (typeof seconds === 'number' && Number.isFinite(seconds) ? new Date(seconds * 1000).toISOString() : null);

export type DecodedStatement =
  | {
      ok: true;
      issuer: string;
      subject: string;
      kid: string | undefined;
      tier: string | undefined;
      jurisdiction: string | undefined;
      issuedAt: string | null;
      notBefore: string | null;
      expiresAt: string | null;
      maxPathLength: number | undefined;
      allowedJurisdictions: string[];
      keyIds: string[];
      state: 'valid' | 'expired' | 'pending';
    }
  | { ok: false; message: string };

/** A delegation statement's claims as a person reads them (not verified here). */
export function decodeStatement(token: string, now: number = Date.now()): DecodedStatement {
  try {
    const claims = decodeJwt(token);
    const header = decodeProtectedHeader(token);
    const constraints = (claims.constraints ?? {}) as { max_path_length?: unknown; allowed_jurisdictions?: unknown };
    const keys = ((claims.jwks as { keys?: unknown } | undefined)?.keys ?? []) as Array<{ kid?: unknown }>;
    const nbf = typeof claims.nbf === 'number' ? claims.nbf * 1000 : undefined;
    const exp = typeof claims.exp === 'number' ? claims.exp * 1000 : undefined;
    return {
      ok: true,
      issuer: String(claims.iss ?? '?'),
      subject: String(claims.sub ?? '?'),
      kid: typeof header.kid === 'string' ? header.kid : undefined,
      tier: typeof claims.tier === 'string' ? claims.tier : undefined,
      jurisdiction: typeof claims.jurisdiction === 'string' ? claims.jurisdiction : undefined,
      issuedAt: isoOf(claims.iat),
      notBefore: isoOf(claims.nbf),
      expiresAt: isoOf(claims.exp),
      maxPathLength: typeof constraints.max_path_length === 'number' ? constraints.max_path_length : undefined,
      allowedJurisdictions: Array.isArray(constraints.allowed_jurisdictions) ? constraints.allowed_jurisdictions.map(String) : [],
      keyIds: Array.isArray(keys) ? keys.map((key) => String(key?.kid ?? '?')) : [],
      state: nbf !== undefined && nbf > now ? 'pending' : exp === undefined || exp <= now ? 'expired' : 'valid',
    };
  } catch (error) {
    return { ok: false, message: error instanceof Error ? error.message : String(error) };
  }
}

function constraintWords(statement: Extract<DecodedStatement, { ok: true }>): string {
  const depth = statement.maxPathLength;
  const below = depth === undefined ? 'depth not stated' : depth === 0 ? 'may delegate no further' : `may delegate ${depth} more level${depth === 1 ? '' : 's'}`;
  const keys = `${statement.keyIds.length} key${statement.keyIds.length === 1 ? '' : 's'} named`;
  return `${below}; ${statement.allowedJurisdictions.join(', ') || 'no jurisdiction'} only; ${keys}`;
}

const STATEMENT_LABELS = { valid: 'valid', expired: 'expired', pending: 'not yet valid' } as const;

/** The statements of a chain, from the root down, one row each. */
export function StatementTable({ statements, caption }: { statements: readonly string[]; caption: string }): View {
  const decoded = statements.map((token) => decodeStatement(token));
  return html`<div class="table-wrap"><table>
    <caption class="muted small">${caption}</caption>
    <thead><tr><th scope="col">Issuer → subject</th><th scope="col">Validity</th><th scope="col" class="hide-narrow">Constraints</th></tr></thead>
    <tbody>${decoded.map((statement, index) =>
      statement.ok
        ? html`<tr data-statement=${index}>
            <td><code>${statement.issuer}</code> → <code>${statement.subject}</code><br /><span class="muted small">${statement.tier ?? '?'} registry for ${statement.jurisdiction ?? '?'}; signed with key <code>${statement.kid ?? '?'}</code></span></td>
            <td>
              <${Badge} state=${statement.state} label=${STATEMENT_LABELS[statement.state]} />
              <div class="small">issued <${Time} at=${statement.issuedAt} /></div>
              <div class="small">expires <${Time} at=${statement.expiresAt} /></div>
            </td>
            <td class="hide-narrow small">${constraintWords(statement)}</td>
          </tr>`
        : html`<tr data-statement=${index}><td colspan="3"><${Badge} state="invalid" label="unreadable" /> Statement ${index + 1} could not be decoded: ${statement.message}</td></tr>`,
    )}</tbody>
  </table></div>`;
}

/**
 * The chain as a numbered path, root first: the first link is the anchor, and each link below it
 * carries the tier its statement (`statements[i]` is about `chain[i + 1]`) gives it.
 */
export function ChainPath({ chain, statements = [], here }: { chain: readonly string[]; statements?: readonly string[]; here?: string | undefined }): View {
  const tiers = statements.map((token) => {
    const statement = decodeStatement(token);
    return statement.ok ? statement.tier : undefined;
  });
  return html`<ol class="chain" aria-label="Delegation chain, root first">${chain.map(
    (link, index) => html`<li data-registry-id=${link}>
      <code>${link}</code>${' '}<${Badge} state="tier" label=${index === 0 ? 'root' : (tiers[index - 1] ?? 'delegated')} />${link === here ? html` <span class="muted small">(this registry)</span>` : ''}
    </li>`,
  )}</ol>`;
}

/**
 * The verifier's prose with its long unbroken words (key ids, URIs, times) set as code, which may
 * break anywhere: a narrow screen then wraps them instead of growing sideways.
 */
function wrappable(prose: string): View[] {
  return prose.split(/(\S{20,})/).map((part, index) => (index % 2 === 1 ? html`<code>${part}</code>` : part));
}

/** The verifier's steps in order, each with its state, what was checked, and what failed. */
export function VerificationSteps({ verification }: { verification: BundleVerification }): View {
  return html`<ol class="steps" aria-label="Verification steps">${verification.steps.map(
    (step) => html`<li data-step-status=${step.status}>
      <span><${Badge} state=${step.status} /></span>
      <div>
        <strong>${step.name}</strong>
        <div class="small">${wrappable(step.detail)}</div>
        ${step.errors.length > 0 &&
        html`<ul class="small">${step.errors.map((error) => html`<li><code>${error.code}</code>: ${wrappable(error.message)}</li>`)}</ul>`}
      </div>
    </li>`,
  )}</ol>`;
}

/** JSON as a person reads it, folded away until asked for. */
export function JsonDetails({ summary, value }: { summary: string; value: unknown }): View {
  return html`<details>
    <summary>${summary}</summary>
    <pre tabindex="0">${JSON.stringify(value, null, 2)}</pre>
  </details>`;
}
