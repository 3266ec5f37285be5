/**
 * The one HTTP client of the registry's `/v1` API: the console, the MCP tools, the federation
 * launcher and the ledger auditor all call the registry through it, and Ward's users import it as
 * `ward/client`. Request and response shapes are the registry's own schemas (`src/contract/schemas/`),
 * so a field renamed there fails type checks here. It never throws for what the network or the
 * registry does: every outcome is a {@link RegistryAnswer}. Nothing is retried (the caller sees
 * `retryable` and decides), and redirects are not followed, so a credential only ever goes to the
 * configured base URL. Discovery and routing answers are verified against the registry's signing keys
 * by default (./answer-verifier.ts): one that does not verify is never a success. The calls are
 * grouped by part of the contract in ./registry-calls.ts and sent by ./registry-transport.ts, which
 * registries also use to call each other (./federation-client.ts).
 */
import { createHash } from 'node:crypto';
import type { PublishedJwk } from '../core/crypto/key-set.ts';
import { createAnswerVerifier, type AnswerVerifier } from './answer-verifier.ts';
import type { AnswerEnvelope, RegistryAnswer, SignedAnswer } from './registry-answer.ts';
import { agentCalls, billingCalls, computerUseCalls, discoveryCalls, JWKS_PATH, ledgerCalls, operationsCalls, trustCalls } from './registry-calls.ts';
import { createRegistryKeys, type RegistryKeys } from './registry-keys.ts';
import { createTransport, send, type CallOptions, type Transport } from './registry-transport.ts';

export type { AnswerEnvelope, CallOptions, RegistryAnswer, SignedAnswer };
export type { AgentRecord, StatusAction } from './registry-calls.ts';
export { isErrorEnvelope } from './registry-transport.ts';

export type RegistryClientOptions = {
  /** The registry's base URL, `http(s)://…`, without the `/v1`. */
  baseUrl: string;
  /** A raw API key or an access token, sent as `Authorization: Bearer …` (contract §7); none for anonymous calls. */
  credential?: string | undefined;
  /** Per request, connection to last byte; default 10 000. */
  timeoutMs?: number;
  userAgent?: string;
  fetch?: typeof fetch;
  /** The setting that holds `baseUrl`, named in messages when it looks wrong; default `REGISTRY_URL`. */
  urlSetting?: string;
  /**
   * Verify the signature of every discovery and routing answer against the registry's keys, and refuse
   * (`SIGNATURE_INVALID`) one that does not verify, is unsigned, answers another request or is stale.
   * Default true; false hands answers over unchecked (their `signature` is then null).
   */
  verifySignatures?: boolean;
  /**
   * The registry's public keys, pinned: a JWK Set (`{keys: [...]}`, e.g. its `/.well-known/jwks.json`
   * or the JWKS of a trust anchor, kept from a channel you trust). Answers verify against these only
   * and nothing is fetched; a rotated-in key then needs pinning too. Default: the keys are read from
   * `<baseUrl>/.well-known/jwks.json`, kept ten minutes, and read again for an answer signed by a key
   * they do not name (a rotation).
   */
  trustedJwks?: { keys: ReadonlyArray<Record<string, unknown>> } | undefined;
  /** The oldest signed discovery answer taken, by its `iat`; default 300 (registries cache an answer 30 s at most). */
  maxAnswerAgeSeconds?: number;
  /** The time signatures and answers are judged at; default the system clock. */
  now?: () => Date;
};

/**
 * A client of one registry, with one credential. {@link RegistryClient.as} makes another with a
 * different credential (the console's sessions each call with their own).
 */
export type RegistryClient = ReturnType<typeof createRegistryClient>;

/**
 * A client of the registry at `options.baseUrl`. Defaults: 10 s per request, anonymous, and
 * discovery and routing answers verified against the registry's published keys
 * ({@link RegistryClientOptions.verifySignatures}).
 */
export function createRegistryClient(options: RegistryClientOptions) {
  return buildClient(options, undefined);
}

/** `keys` is the key set of the client this one was made from by `as()`: one registry, one set. */
function buildClient(options: RegistryClientOptions, sharedKeys: RegistryKeys | undefined) {
  const transport = createTransport({ ...options, userAgent: options.userAgent ?? 'ward-client' });
  const { baseUrl } = transport;
  const keys = sharedKeys ?? createRegistryKeys({ pinned: options.trustedJwks as { keys: PublishedJwk[] } | undefined, load: () => loadKeys(transport) });
  const verify: AnswerVerifier =
    options.verifySignatures === false
      ? async (_kind, answer) => (answer.ok ? { ...answer, signature: null } : answer)
      : createAnswerVerifier({ registryUrl: baseUrl, keys, now: options.now ?? (() => new Date()), maxAnswerAgeSeconds: options.maxAnswerAgeSeconds ?? 300 });

  return {
    baseUrl,
    /** Which registry and credential this client speaks for, as a digest (a cache key that holds no secret). */
    identity: createHash('sha256').update(`${baseUrl}\n${options.credential ?? ''}`).digest('base64url'),
    /** Any registry request; the typed methods are this with a path and a shape. */
    request: <T>(method: 'GET' | 'POST' | 'PUT' | 'DELETE', path: string, init: CallOptions & { body?: unknown } = {}): Promise<RegistryAnswer<T>> =>
      send<T>(transport, method, path, init),
    /** The same client with another credential (or none). */
    as(credential: string | undefined) {
      return buildClient({ ...options, credential }, keys);
    },
    ...operationsCalls(transport),
    ...agentCalls(transport),
    ...discoveryCalls(transport, verify),
    ...trustCalls(transport),
    ...ledgerCalls(transport),
    ...billingCalls(transport),
    ...computerUseCalls(transport),
  };
}

/** Reads the registry's JWKS for the answer verifier; never throws (./registry-keys.ts). */
async function loadKeys(transport: Transport) {
  const answer = await send<{ keys?: unknown }>(transport, 'GET', JWKS_PATH);
  const details = { url: `${transport.baseUrl}${JWKS_PATH}`, status: answer.status };
  if (!answer.ok) {
    return { ok: false as const, message: `The registry's public keys could not be read (${answer.envelope.error.message})`, details: { ...details, cause: answer.envelope.error.code } };
  }
  const set = answer.body?.keys;
  if (!Array.isArray(set) || !set.every((key) => typeof key === 'object' && key !== null)) {
    return { ok: false as const, message: `The registry's ${JWKS_PATH} is not a JWK Set`, details };
  }
  return { ok: true as const, keys: set as PublishedJwk[] };
}
