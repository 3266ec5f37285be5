// Real `ward registry` processes for end-to-end federation tests: starting one beside a running
// federation, reaching it over plain HTTP, and reading the signing key a registry keeps in its own
// SQLite database so a test can sign exactly what that registry could sign.
import type { ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { CompactSign, decodeJwt, importJWK, type JWK } from 'jose';
import type { RegistrySigner } from '../../src/registry/signing-keys/registry-signer.ts';
import { openStorage } from '../../src/registry/storage/database.ts';
import { findActiveSigningKey } from '../../src/registry/signing-keys/storage/signing-key-store.ts';
import type { DelegationStatementClaims } from '../../src/contract/delegation-statement.ts';
import type { TrustAnchorInput } from '../../src/client/trust/bundle-verifier.ts';
import type { SignedTrustBundle } from '../../src/contract/trust-bundle.ts';
import { startRegistryProcess as startTierProcess, stopRegistryProcess } from '../../src/service/federation-up.ts';

export type RegistryProcess = { url: string; registryId: string; dataDir: string; process: ChildProcess };

export type RegistryProcessOptions = {
  tier: 'root' | 'sovereign' | 'organisational';
  name: string;
  jurisdiction: string;
  dataDir: string;
  /** 0: any free port. */
  port?: number;
  parentUrl?: string;
  env?: Record<string, string>;
};

/**
 * Runs `ward registry` as a child process with the settings `ward federation up` gives its tiers
 * (own SQLite database in `dataDir`, loopback, no authentication, no health probes) and resolves
 * once it logs `registry listening`. The caller stops it with {@link stopRegistryProcess}.
 */
export async function startRegistryProcess(options: RegistryProcessOptions): Promise<RegistryProcess> {
  const { tier, name, jurisdiction, dataDir } = options;
  const started = await startTierProcess(
    { tier, name, jurisdiction },
    { port: options.port ?? 0, dataDir, ...(options.parentUrl ? { parentUrl: options.parentUrl } : {}), ...(options.env ? { env: options.env } : {}) },
  );
  return { ...started, dataDir };
}

export { stopRegistryProcess };

export type JsonResponse = { status: number; body: any };

/** GET `url` as JSON. */
export async function getJson(url: string): Promise<JsonResponse> {
  const response = await fetch(url, { headers: { accept: 'application/json' }, signal: AbortSignal.timeout(10_000) });
  const text = await response.text();
  return { status: response.status, body: text ? JSON.parse(text) : undefined };
}

/** POST `body` as JSON to `url`, with a fresh idempotency key (every registry POST needs one). */
export async function postJson(url: string, body: unknown): Promise<JsonResponse> {
  const response = await fetch(url, {
    method: 'POST',
    headers: { accept: 'application/json', 'content-type': 'application/json', 'x-idempotency-key': randomUUID() },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(10_000),
  });
  const text = await response.text();
  return { status: response.status, body: text ? JSON.parse(text) : undefined };
}

/** What a client keeps to verify chains back to `root`: its published keys, its URI and its address. */
export async function fetchAnchor(root: { url: string; registryId: string }): Promise<TrustAnchorInput> {
  const { status, body } = await getJson(`${root.url}/.well-known/jwks.json`);
  if (status !== 200) throw new Error(`${root.url}/.well-known/jwks.json answered ${status}`);
  return { jwks: body, registry_id: root.registryId, api_base_url: root.url };
}

/** The trust bundle `registry` issues for `subject`. */
export async function fetchBundle(registry: { url: string }, subject: string): Promise<SignedTrustBundle> {
  const { status, body } = await getJson(`${registry.url}/v1/trust/bundle?subject=${encodeURIComponent(subject)}`);
  if (status !== 200) throw new Error(`the bundle of ${subject} could not be had: ${status} ${JSON.stringify(body)}`);
  return body;
}

export type StoredSigningKey = { kid: string; alg: string; privateKey: Awaited<ReturnType<typeof importJWK>> };

/** The active signing key of the registry whose data directory is `dataDir`, read from its SQLite database. */
export async function readSigningKey(dataDir: string): Promise<StoredSigningKey> {
  const storage = await openStorage({ backend: 'sqlite', path: join(dataDir, 'registry.sqlite') });
  try {
    const row = await findActiveSigningKey(storage.db);
    if (!row) throw new Error(`no active signing key in ${dataDir}`);
    return { kid: row.kid, alg: row.alg, privateKey: await importJWK(row.private_jwk as JWK, row.alg) };
  } finally {
    await storage.close();
  }
}

/**
 * A signer over a stored key, for `signDelegationStatement` and bundles: header `{alg, kid, typ}`
 * plus `extraHeader` (a `jku`, `x5u` or another `kid` a forger might add).
 */
export function keySigner(key: StoredSigningKey, extraHeader: Record<string, unknown> = {}): Pick<RegistrySigner, 'sign'> {
  return {
    sign: (payload, typ = 'JWT') =>
      new CompactSign(new TextEncoder().encode(JSON.stringify(payload))).setProtectedHeader({ alg: key.alg, kid: key.kid, typ, ...extraHeader }).sign(key.privateKey),
  };
}

/** The same bundle with other fields (`statements`, a chain…), signed again by `issuerKey`. */
export async function resignBundle(bundle: SignedTrustBundle, changes: Partial<SignedTrustBundle>, issuerKey: StoredSigningKey): Promise<SignedTrustBundle> {
  const { signed_bundle: _old, ...fields } = { ...bundle, ...changes };
  return { ...fields, signed_bundle: await keySigner(issuerKey).sign(fields, 'ward-trust-bundle+jwt') };
}

/** The claims of a statement a registry issued (read, not verified: a template for a forged one). */
export function statementClaims(statement: string): DelegationStatementClaims {
  return decodeJwt(statement) as unknown as DelegationStatementClaims;
}
