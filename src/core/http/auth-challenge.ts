/**
 * The one `WWW-Authenticate` challenge every Ward server answers a refused credential with (RFC 6750
 * §3 for Bearer, RFC 9449 §7.1 for DPoP): the registry's 401s, the gateway's, the agents' and the
 * avatar's speech routes. Quoted values never carry a quote, a backslash or a control character.
 */
export type AuthChallenge = {
  readonly scheme: 'Bearer' | 'DPoP';
  readonly realm?: string;
  /** `invalid_request`, `invalid_token`, `invalid_dpop_proof`…; absent when no credential was offered. */
  readonly error?: string;
  readonly description?: string;
  /** DPoP: the proof algorithms the server accepts. */
  readonly algs?: readonly string[];
};

export function authChallenge(challenge: AuthChallenge): string {
  const params: string[] = [];
  if (challenge.realm !== undefined) params.push(`realm="${quotable(challenge.realm)}"`);
  if (challenge.error !== undefined) params.push(`error="${quotable(challenge.error)}"`);
  if (challenge.description !== undefined) params.push(`error_description="${quotable(challenge.description)}"`);
  if (challenge.algs !== undefined) params.push(`algs="${quotable(challenge.algs.join(' '))}"`);
  return params.length === 0 ? challenge.scheme : `${challenge.scheme} ${params.join(', ')}`;
}

/** What may stand inside a quoted-string (RFC 9110 §5.6.4) without escaping: the rest becomes a space. */
function quotable(text: string): string {
  return text.replace(/[^\x20\x21\x23-\x5B\x5D-\x7E]/g, ' ');
}
