// The online half of chain verification: each statement's issuer is asked whether the subject is still
// active (docs/federation.md, "Status tokens"). The issuer's address comes only from the anchor or from a
// statement already verified, and only the signed status token counts. Anything short of a verified,
// current token fails closed. The issuer is asked through the federation client (../federation-client.ts).
import { STATUS_TYP, readStatusClaims } from '../../contract/delegation-statement.ts';
import { createFederationClient } from '../federation-client.ts';
import type { OidfFetchOptions } from '../openid-federation-client.ts';
import type { RegistryAnswer } from '../registry-answer.ts';
import type { ChainVerificationError } from './chain-errors.ts';
import type { CheckedStatement } from './chain-verifier.ts';
import { SKEW_MS, offeredKeyMembers, readProtectedHeader, verifyWithKeySet } from '../../core/crypto/key-set.ts';

export type OnlineStatusOptions = {
  /** Defaults to the global `fetch`. */
  fetch?: typeof fetch;
  /** Per request; default {@link DEFAULT_STATUS_TIMEOUT_MS}. */
  timeoutMs?: number;
};

export const DEFAULT_STATUS_TIMEOUT_MS = 5000;

/** The OIDF calls' options for `online`: one fetch, timeout and size bound for every online OIDF check. */
export function onlineFetchOptions(online: OnlineStatusOptions): OidfFetchOptions {
  return { ...(online.fetch ? { fetch: online.fetch } : {}), timeoutMs: online.timeoutMs ?? DEFAULT_STATUS_TIMEOUT_MS };
}

/**
 * Asks the issuer of every verified statement for its subject's status, all at once. The issuer of
 * statement 0 answers at `anchorBaseUrl`, the issuer of statement i > 0 at the `api_base_url` that
 * statement i − 1 signed for it.
 */
export async function checkStatementStatuses(
  statements: readonly CheckedStatement[],
  anchorBaseUrl: string | undefined,
  now: Date,
  options: OnlineStatusOptions,
): Promise<ChainVerificationError[]> {
  const answers = await Promise.all(
    statements.map((statement, position) =>
      checkStatus(statement, position === 0 ? anchorBaseUrl : statements[position - 1]?.claims.api_base_url ?? undefined, now, options),
    ),
  );
  return answers.flat();
}

async function checkStatus(
  statement: CheckedStatement,
  baseUrl: string | undefined,
  now: Date,
  options: OnlineStatusOptions,
): Promise<ChainVerificationError[]> {
  const { iss, sub } = statement.claims;
  const label = `statement ${statement.index} (${iss} → ${sub})`;
  const unavailable = (why: string): ChainVerificationError[] => [{ code: 'STATUS_UNAVAILABLE', message: `${label}: ${why}` }];
  if (!baseUrl) return unavailable('the anchor names no api_base_url to ask for the status');

  // Redirects are followed here: only the signed token counts, wherever it comes from.
  const issuer = createFederationClient({ baseUrl, fetch: options.fetch, timeoutMs: options.timeoutMs ?? DEFAULT_STATUS_TIMEOUT_MS, redirect: 'follow' });
  const answer = await issuer.delegationStatus(sub);
  const where = `the status endpoint of ${issuer.baseUrl}`;
  if (!answer.ok) {
    const { status } = answer;
    if (status !== null && (status < 200 || status >= 300)) return unavailable(`${where} answered ${status}`);
    return unavailable(`${where} could not be read (${failureReason(answer)})`);
  }
  const token: unknown = (answer.body as { status_token?: unknown } | null)?.status_token;

  const header = readProtectedHeader(token);
  if (!header) return unavailable('the answer holds no status token');
  if (offeredKeyMembers(header).length > 0) return unavailable('the status token header offers a key');
  if (header.typ !== STATUS_TYP) return unavailable(`the status token typ is not ${STATUS_TYP}`);
  const verified = await verifyWithKeySet(token as string, header, statement.issuerKeys, now);
  if (!verified.ok) return unavailable(`the status token does not verify with the issuer's keys: ${verified.message}`);
  const read = readStatusClaims(verified.payload);
  if ('problem' in read) return unavailable(`the status token is malformed: ${read.problem}`);
  const { claims } = read;
  if (claims.iss !== iss || claims.sub !== sub) return unavailable('the status token is about another statement');
  if (now.getTime() >= claims.exp * 1000 + SKEW_MS) return unavailable('the status token has expired');
  if (claims.status === 'revoked') {
    return [{ code: 'STATEMENT_REVOKED', message: `${label}: ${sub} was revoked by ${iss}${claims.revoked_at ? ` at ${claims.revoked_at}` : ''}` }];
  }
  return [];
}

/** The transport's reason (ECONNREFUSED, timeout…), or that the answer was not JSON. */
function failureReason(answer: Extract<RegistryAnswer, { ok: false }>): string {
  const cause = answer.envelope.error.details?.cause;
  return typeof cause === 'string' ? cause : 'the answer is not JSON';
}
