/** A credential as presented on the wire (contract §7), before anything is verified. */
export type PresentedCredential =
  | { kind: 'none' }
  | { kind: 'api_key'; rawKey: string }
  | { kind: 'bearer'; token: string }
  | { kind: 'dpop'; token: string; proof: string | undefined }
  | { kind: 'malformed'; scheme: 'Bearer' | 'DPoP' };

/**
 * Reads the credential from the headers: an API key as `X-API-Key` or `Authorization: Bearer rk_…`,
 * otherwise a Bearer token (jwt, mtls modes) or a DPoP-bound token with its `DPoP` proof.
 */
export function presentedCredential(headers: Record<string, string | string[] | undefined>): PresentedCredential {
  const apiKey = single(headers['x-api-key']);
  if (apiKey !== undefined) return { kind: 'api_key', rawKey: apiKey.trim() };
  const authorization = single(headers.authorization);
  if (authorization === undefined) return { kind: 'none' };
  const match = /^(\S+)\s+(\S+)\s*$/.exec(authorization);
  const scheme = match?.[1]?.toLowerCase();
  const value = match?.[2];
  if (scheme === 'bearer' && value) return value.startsWith('rk_') ? { kind: 'api_key', rawKey: value } : { kind: 'bearer', token: value };
  if (scheme === 'dpop' && value) return { kind: 'dpop', token: value, proof: single(headers.dpop) };
  return { kind: 'malformed', scheme: scheme === 'dpop' ? 'DPoP' : 'Bearer' };
}

function single(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}
