import { readFile } from 'node:fs/promises';
import { ConfigError, type Config } from '../../../core/config.ts';
import type { RegistrySigner } from '../../signing-keys/index.ts';
import { registryUri } from '../../../core/ids.ts';
import type { KnownIssuer } from './attestations.ts';

/**
 * The attestation issuers this registry trusts: itself (by its registry URI, with its own JWKS) and
 * those listed in `REGISTRY_ATTESTATION_ISSUERS_FILE`, a JSON file `{"issuers":[{"iss","jwks"}]}`.
 * Read once at start; a malformed file stops start-up.
 */
export async function loadKnownIssuers(config: Config, signer: RegistrySigner): Promise<KnownIssuer[]> {
  const self: KnownIssuer = {
    iss: registryUri(config.REGISTRY_JURISDICTION, config.REGISTRY_NAME),
    jwks: signer.jwks() as KnownIssuer['jwks'],
  };
  const path = config.REGISTRY_ATTESTATION_ISSUERS_FILE;
  if (!path) return [self];
  let parsed: unknown;
  try {
    parsed = JSON.parse(await readFile(path, 'utf8'));
  } catch (error) {
    throw new ConfigError('REGISTRY_ATTESTATION_ISSUERS_FILE', `cannot be read as JSON (${(error as Error).message})`);
  }
  const issuers = (parsed as { issuers?: unknown }).issuers;
  if (!Array.isArray(issuers) || !issuers.every(isIssuer)) {
    throw new ConfigError('REGISTRY_ATTESTATION_ISSUERS_FILE', 'must hold {"issuers":[{"iss": string, "jwks": {"keys": [...]}}]}');
  }
  return [self, ...issuers];
}

function isIssuer(value: unknown): value is KnownIssuer {
  if (typeof value !== 'object' || value === null) return false;
  const { iss, jwks } = value as { iss?: unknown; jwks?: { keys?: unknown } };
  return typeof iss === 'string' && iss.length > 0 && Array.isArray(jwks?.keys);
}
