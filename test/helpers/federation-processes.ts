// Real `ward registry` processes for end-to-end federation tests: starting one beside a running
// federation, reaching it over plain HTTP, and reading the signing key a registry keeps in its own
// SQLite database so a test can sign exactly what that registry could sign.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { CompactSign, decodeJwt, importJWK, type JWK } from 'jose';
import type { RegistrySigner } from '../../src/core/crypto/registry-signer.ts';
import { openStorage } from '../../src/core/storage/database.ts';
import { findActiveSigningKey } from '../../src/core/storage/stores/signing-key-store.ts';
import type { DelegationStatementClaims } from '../../src/registry/federation/delegation-statement.ts';
import type { TrustAnchorInput } from '../../src/registry/trust/bundle-verifier.ts';
import type { SignedTrustBundle } from '../../src/registry/trust/trust-bundle.ts';
import { cleanEnv, WARD_CLI } from './ward-process.ts';

/** A safety net: a registry that never logs its address fails the test instead of hanging it. */
const READY_TIMEOUT_MS = 30_000;

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
  const env = {
    ...cleanEnv(),
    REGISTRY_ENV: 'development',
    REGISTRY_HOST: '127.0.0.1',
    REGISTRY_PORT: String(options.port ?? 0),
    REGISTRY_DATA_DIR: options.dataDir,
    REGISTRY_TIER: options.tier,
    REGISTRY_NAME: options.name,
    REGISTRY_JURISDICTION: options.jurisdiction,
    REGISTRY_AUTH_MODE: 'disabled',
    REGISTRY_HEALTH_PROBES: 'false',
    REGISTRY_LOG_LEVEL: 'info',
    ...(options.parentUrl ? { REGISTRY_PARENT_URL: options.parentUrl } : {}),
    ...options.env,
  };
  const child = spawn(process.execPath, [WARD_CLI, 'registry'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  try {
    const url = await listeningUrl(child, options.name);
    return { url, registryId: `registry://${options.jurisdiction.toLowerCase()}/registries/${options.name}`, dataDir: options.dataDir, process: child };
  } catch (error) {
    await stopRegistryProcess(child);
    throw error;
  }
}

function listeningUrl(child: ChildProcess, name: string): Promise<string> {
  return new Promise<string>((resolve, reject) => {
    let buffered = '';
    let stderr = '';
    const timer = setTimeout(() => reject(new Error(`${name} did not start within ${READY_TIMEOUT_MS} ms`)), READY_TIMEOUT_MS);
    const onExit = (code: number | null) => {
      clearTimeout(timer);
      reject(new Error(`${name} exited with ${code}: ${stderr.trim().split('\n').slice(-3).join(' ')}`));
    };
    child.once('exit', onExit);
    child.stderr?.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    child.stdout?.setEncoding('utf8').on('data', function onData(chunk: string) {
      buffered += chunk;
      const lines = buffered.split('\n');
      buffered = lines.pop() ?? '';
      for (const line of lines) {
        const entry = parseJson(line);
        if (entry?.msg === 'registry listening' && typeof entry.url === 'string') {
          clearTimeout(timer);
          child.off('exit', onExit);
          child.stdout?.off('data', onData);
          // The log keeps flowing; drain it so the child never blocks on a full pipe.
          child.stdout?.resume();
          resolve(entry.url);
          return;
        }
      }
    });
  });
}

/** Stops a registry process (SIGTERM, or `signal`; SIGKILL after a grace period) and waits for it to exit. */
export async function stopRegistryProcess(child: ChildProcess, signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill(signal);
  const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
  await exited;
  clearTimeout(timer);
}

function parseJson(line: string): Record<string, unknown> | undefined {
  try {
    return JSON.parse(line) as Record<string, unknown>;
  } catch {
    return undefined;
  }
}

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
