/**
 * The one HTTP client of the registry's `/v1` API: the console, the MCP tools, the federation
 * launcher and the ledger auditor all call the registry through it, and Ward's users import it as
 * `ward/client`. Request and response shapes are the registry's own schemas (`src/contract/schemas/`),
 * so a field renamed there fails type checks here. It never throws for what the network or the
 * registry does: every outcome is a {@link RegistryAnswer}. Nothing is retried (the caller sees
 * `retryable` and decides), and redirects are not followed, so a credential only ever goes to the
 * configured base URL. Discovery and routing answers are verified against the registry's signing keys
 * by default (./answer-verifier.ts): one that does not verify is never a success.
 */
import { createHash } from 'node:crypto';
import type { Static } from 'typebox';
import type { PublishedJwk } from '../core/crypto/key-set.ts';
import { errorEnvelope, type ErrorEnvelope } from '../core/errors.ts';
import type { AgentListSchema, AgentRecordSchema, ListAgentsQuery, RegisterAgentBody, UpdateAgentBody } from '../contract/schemas/agent-schemas.ts';
import type {
  DiscoverQuery,
  DiscoveryResponseSchema,
  RouteBody,
  RoutingResponseSchema,
  TrustAnchorSchema,
  TrustBundleSchema,
} from '../contract/schemas/discovery-schemas.ts';
import type { EventHistoryQuery, EventHistorySchema } from '../contract/schemas/event-schemas.ts';
import type {
  ApiKeyListSchema,
  ApiKeySchema,
  CreateApiKeyBody,
  CreatedApiKeySchema,
  ListApiKeysQuery,
  TiersSchema,
} from '../contract/schemas/key-schemas.ts';
import type { CallerSchema, DiagnosticsSchema, OverviewSchema } from '../contract/schemas/operations-schemas.ts';
import type {
  ListRegistriesQuery,
  RegisterRegistryBody,
  RegistryListSchema,
  RegistryRecordSchema,
  RotateKeyBody,
  RotatedKeySchema,
} from '../contract/schemas/registry-schemas.ts';
import type {
  ConsistencyQuery,
  ConsistencyResponse,
  EntriesQuery,
  EntriesResponse,
  InclusionQuery,
  InclusionResponse,
  SignedTreeHeadResponse,
} from '../contract/schemas/transparency-schemas.ts';
import type { LiveUsageSchema, UsageSummaryQuery, UsageSummarySchema } from '../contract/schemas/usage-schemas.ts';
import { createAnswerVerifier } from './answer-verifier.ts';
import type { AnswerEnvelope, RegistryAnswer, SignedAnswer } from './registry-answer.ts';
import { createRegistryKeys, type RegistryKeys } from './registry-keys.ts';

export type { AnswerEnvelope, RegistryAnswer, SignedAnswer };

/** Per-call options: cancellation, and the headers of a write (contract §2). */
export type CallOptions = { signal?: AbortSignal | undefined; idempotencyKey?: string; ifMatch?: string; headers?: Record<string, string> };

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

export type AgentRecord = Static<typeof AgentRecordSchema>;
export type StatusAction = 'suspend' | 'reinstate' | 'retire' | 'revoke';

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
  const baseUrl = options.baseUrl.replace(/\/+$/, '');
  const fetchImpl = options.fetch ?? fetch;
  const timeoutMs = options.timeoutMs ?? 10_000;
  const setting = options.urlSetting ?? 'REGISTRY_URL';
  const baseHeaders: Record<string, string> = {
    accept: 'application/json',
    'user-agent': options.userAgent ?? 'ward-client',
    ...(options.credential ? { authorization: `Bearer ${options.credential}` } : {}),
  };

  /** Any registry request; the typed methods below are this with a path and a shape. */
  async function request<T>(method: 'GET' | 'POST' | 'PUT' | 'DELETE', path: string, init: CallOptions & { body?: unknown } = {}): Promise<RegistryAnswer<T>> {
    const timeout = AbortSignal.timeout(timeoutMs);
    const signal = init.signal ? AbortSignal.any([init.signal, timeout]) : timeout;
    const headers: Record<string, string> = {
      ...baseHeaders,
      ...init.headers,
      ...(init.body === undefined ? {} : { 'content-type': 'application/json' }),
      ...(init.idempotencyKey ? { 'x-idempotency-key': init.idempotencyKey } : {}),
      ...(init.ifMatch ? { 'if-match': init.ifMatch } : {}),
    };
    let status: number | null = null;
    try {
      const response = await fetchImpl(`${baseUrl}${path}`, {
        method,
        headers,
        ...(init.body === undefined ? {} : { body: JSON.stringify(init.body) }),
        signal,
        redirect: 'manual',
      });
      status = response.status;
      return interpret<T>(response.status, response.headers, await response.text());
    } catch (error) {
      if (timeout.aborted) {
        return unavailable(status, `The registry did not answer within ${timeoutMs} ms.`, { cause: 'timeout', timeout_ms: timeoutMs });
      }
      if (init.signal?.aborted) return unavailable(status, 'The request was cancelled.', { cause: 'cancelled' });
      const cause = describe(error);
      return unavailable(status, `The registry could not be reached (${cause}).`, { cause });
    }
  }

  function unavailable(status: number | null, message: string, details: Record<string, unknown>): RegistryAnswer<never> {
    const envelope = errorEnvelope('SERVICE_UNAVAILABLE', message, { registry_url: baseUrl, ...details });
    return { ok: false, status, headers: null, text: JSON.stringify(envelope), envelope };
  }

  function interpret<T>(status: number, headers: Headers, text: string): RegistryAnswer<T> {
    const body = parseJson(text);
    if (status >= 200 && status < 300 && (body !== undefined || status === 204)) return { ok: true, status, headers, text, body: body as T };
    if (status >= 400 && isErrorEnvelope(body)) return { ok: false, status, headers, text, envelope: body };
    // Not the registry's kind of answer: a proxy page, a redirect, a wrong base URL.
    const why =
      status >= 300 && status < 400
        ? `a redirect to ${headers.get('location') ?? 'elsewhere'}; set ${setting} to the final address`
        : status < 300
          ? `a body that is not JSON; is ${setting} the registry base URL?`
          : `no JSON error envelope; is ${setting} the registry base URL?`;
    return { ...unavailable(status, `The registry answered HTTP ${status} with ${why}.`, { status }), headers };
  }

  const query = (values: object) => {
    const search = new URLSearchParams();
    for (const [name, value] of Object.entries(values)) {
      if (value === undefined || value === null) continue;
      for (const item of [value].flat()) search.append(name, String(item));
    }
    const text = search.toString();
    return text ? `?${text}` : '';
  };
  const id = (value: string) => encodeURIComponent(value);

  const jwksPath = '/.well-known/jwks.json';
  const keys =
    sharedKeys ??
    createRegistryKeys({
      pinned: options.trustedJwks as { keys: PublishedJwk[] } | undefined,
      load: async () => {
        const answer = await request<{ keys?: unknown }>('GET', jwksPath);
        const details = { url: `${baseUrl}${jwksPath}`, status: answer.status };
        if (!answer.ok) {
          return { ok: false, message: `The registry's public keys could not be read (${answer.envelope.error.message})`, details: { ...details, cause: answer.envelope.error.code } };
        }
        const set = answer.body?.keys;
        if (!Array.isArray(set) || !set.every((key) => typeof key === 'object' && key !== null)) {
          return { ok: false, message: `The registry's ${jwksPath} is not a JWK Set`, details };
        }
        return { ok: true, keys: set as PublishedJwk[] };
      },
    });
  const verify =
    options.verifySignatures === false
      ? async <T>(_kind: unknown, answer: RegistryAnswer<T>): Promise<SignedAnswer<T>> => (answer.ok ? { ...answer, signature: null } : answer)
      : createAnswerVerifier({ registryUrl: baseUrl, keys, now: options.now ?? (() => new Date()), maxAnswerAgeSeconds: options.maxAnswerAgeSeconds ?? 300 });

  return {
    baseUrl,
    /** Which registry and credential this client speaks for, as a digest (a cache key that holds no secret). */
    identity: createHash('sha256').update(`${baseUrl}\n${options.credential ?? ''}`).digest('base64url'),
    request,
    /** The same client with another credential (or none). */
    as(credential: string | undefined) {
      return buildClient({ ...options, credential }, keys);
    },

    // Registry itself
    metadata: (call: CallOptions = {}) => request<Record<string, unknown>>('GET', '/.well-known/agent-registry', call),
    jwks: (call: CallOptions = {}) => request<{ keys: Array<Record<string, unknown>> }>('GET', jwksPath, call),
    health: (call: CallOptions = {}) => request<{ status: string; storage: string }>('GET', '/health', call),
    caller: (call: CallOptions = {}) => request<Static<typeof CallerSchema>>('GET', '/v1/caller', call),
    overview: (call: CallOptions = {}) => request<Static<typeof OverviewSchema>>('GET', '/v1/admin/overview', call),
    diagnostics: (call: CallOptions = {}) => request<Static<typeof DiagnosticsSchema>>('GET', '/v1/admin/diagnostics', call),

    // Agents (contract §3)
    listAgents: (filter: Static<typeof ListAgentsQuery> = {}, call: CallOptions = {}) =>
      request<Static<typeof AgentListSchema>>('GET', `/v1/agents${query(filter)}`, call),
    getAgent: (agentId: string, call: CallOptions = {}) => request<AgentRecord>('GET', `/v1/agents/${id(agentId)}`, call),
    registerAgent: (body: Static<typeof RegisterAgentBody>, call: CallOptions = {}) => request<AgentRecord>('POST', '/v1/agents', { ...call, body }),
    updateAgent: (agentId: string, body: Static<typeof UpdateAgentBody>, call: CallOptions = {}) =>
      request<AgentRecord>('PUT', `/v1/agents/${id(agentId)}`, { ...call, body }),
    changeAgentStatus: (agentId: string, action: StatusAction, reason: string | undefined, call: CallOptions = {}) =>
      request<AgentRecord>('POST', `/v1/agents/${id(agentId)}/${action}`, { ...call, body: reason === undefined ? {} : { reason } }),
    /**
     * Opens the change stream (contract §6) and hands back the live response, not its text: the
     * caller reads or forwards the body as it arrives. Only the connection is bounded by the timeout;
     * `call.signal` ends the stream.
     */
    async openEventStream(position: { cursor?: string | undefined; lastEventId?: string | undefined }, call: CallOptions = {}) {
      const connect = AbortSignal.timeout(timeoutMs);
      const stop = new AbortController();
      const signal = call.signal ? AbortSignal.any([call.signal, stop.signal]) : stop.signal;
      const abortOnConnectTimeout = () => stop.abort(connect.reason);
      connect.addEventListener('abort', abortOnConnectTimeout, { once: true });
      const headers: Record<string, string> = { ...baseHeaders, accept: 'text/event-stream', ...(position.lastEventId ? { 'last-event-id': position.lastEventId } : {}) };
      try {
        const response = await fetchImpl(`${baseUrl}/v1/events/stream${query({ cursor: position.cursor })}`, { headers, signal, redirect: 'manual' });
        connect.removeEventListener('abort', abortOnConnectTimeout);
        if (response.ok && response.body) return { ok: true as const, response };
        return interpret<never>(response.status, response.headers, await response.text()) as Extract<RegistryAnswer, { ok: false }>;
      } catch (error) {
        connect.removeEventListener('abort', abortOnConnectTimeout);
        if (connect.aborted) return unavailable(null, `The registry did not answer within ${timeoutMs} ms.`, { cause: 'timeout', timeout_ms: timeoutMs }) as Extract<RegistryAnswer, { ok: false }>;
        return unavailable(null, `The registry could not be reached (${describe(error)}).`, { cause: describe(error) }) as Extract<RegistryAnswer, { ok: false }>;
      }
    },
    events: (filter: Static<typeof EventHistoryQuery> = {}, call: CallOptions = {}) =>
      request<Static<typeof EventHistorySchema>>('GET', `/v1/events${query(filter)}`, call),

    // Discovery and routing (contract §4), each answer verified unless verifySignatures is false
    discover: async (filter: Static<typeof DiscoverQuery>, call: CallOptions = {}) =>
      verify('discovery', await request<Static<typeof DiscoveryResponseSchema>>('GET', `/v1/discover${query(filter)}`, call), { capability: filter.capability }),
    route: async (body: Static<typeof RouteBody>, call: CallOptions = {}) =>
      verify('routing', await request<Static<typeof RoutingResponseSchema>>('POST', '/v1/route', { ...call, body }), { target: body.target ?? body.target_agent_id }),

    // Trust and federation (contract §5)
    trustAnchors: (call: CallOptions = {}) => request<{ anchors: Array<Static<typeof TrustAnchorSchema>> }>('GET', '/v1/trust/anchors', call),
    trustBundle: (subject: string, call: CallOptions = {}) =>
      request<Static<typeof TrustBundleSchema>>('GET', `/v1/trust/bundle${query({ subject })}`, call),
    rotateSigningKey: (body: Static<typeof RotateKeyBody>, call: CallOptions = {}) =>
      request<Static<typeof RotatedKeySchema>>('POST', '/v1/trust/keys/rotate', { ...call, body }),
    listRegistries: (filter: Static<typeof ListRegistriesQuery> = {}, call: CallOptions = {}) =>
      request<Static<typeof RegistryListSchema>>('GET', `/v1/registries${query(filter)}`, call),
    getRegistry: (registryId: string, call: CallOptions = {}) =>
      request<Static<typeof RegistryRecordSchema>>('GET', `/v1/registries/${id(registryId)}`, call),
    registerRegistry: (body: Static<typeof RegisterRegistryBody>, call: CallOptions = {}) =>
      request<Static<typeof RegistryRecordSchema>>('POST', '/v1/registries', { ...call, body }),
    revokeRegistry: (registryId: string, reason: string, call: CallOptions = {}) =>
      request<Static<typeof RegistryRecordSchema>>('POST', `/v1/registries/${id(registryId)}/revoke`, { ...call, body: { reason } }),

    // Transparency ledger (contract §6)
    treeHead: (call: CallOptions = {}) => request<Static<typeof SignedTreeHeadResponse>>('GET', '/v1/transparency/sth', call),
    ledgerEntries: (filter: Static<typeof EntriesQuery>, call: CallOptions = {}) =>
      request<Static<typeof EntriesResponse>>('GET', `/v1/transparency/entries${query(filter)}`, call),
    inclusionProof: (filter: Static<typeof InclusionQuery>, call: CallOptions = {}) =>
      request<Static<typeof InclusionResponse>>('GET', `/v1/transparency/proof/inclusion${query(filter)}`, call),
    consistencyProof: (filter: Static<typeof ConsistencyQuery>, call: CallOptions = {}) =>
      request<Static<typeof ConsistencyResponse>>('GET', `/v1/transparency/proof/consistency${query(filter)}`, call),

    // Keys, usage and tiers (contract §7)
    createApiKey: (body: Static<typeof CreateApiKeyBody>, call: CallOptions = {}) =>
      request<Static<typeof CreatedApiKeySchema>>('POST', '/v1/admin/billing/api-keys', { ...call, body }),
    listApiKeys: (filter: Static<typeof ListApiKeysQuery> = {}, call: CallOptions = {}) =>
      request<Static<typeof ApiKeyListSchema>>('GET', `/v1/admin/billing/api-keys${query(filter)}`, call),
    getApiKey: (keyId: string, call: CallOptions = {}) => request<Static<typeof ApiKeySchema>>('GET', `/v1/admin/billing/api-keys/${id(keyId)}`, call),
    revokeApiKey: (keyId: string, call: CallOptions = {}) => request<undefined>('DELETE', `/v1/admin/billing/api-keys/${id(keyId)}`, call),
    usage: (filter: Static<typeof UsageSummaryQuery>, call: CallOptions = {}) =>
      request<Static<typeof UsageSummarySchema>>('GET', `/v1/admin/billing/usage${query(filter)}`, call),
    liveUsage: (keyId: string, call: CallOptions = {}) =>
      request<Static<typeof LiveUsageSchema>>('GET', `/v1/admin/billing/usage/${id(keyId)}/live`, call),
    tiers: (call: CallOptions = {}) => request<Static<typeof TiersSchema>>('GET', '/v1/admin/billing/tiers', call),
  };
}

function parseJson(text: string): unknown {
  if (text === '') return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

/** `{"error":{"code","message",…}}` (spec: Error envelope). */
export function isErrorEnvelope(value: unknown): value is ErrorEnvelope {
  if (typeof value !== 'object' || value === null) return false;
  const error = (value as { error?: unknown }).error;
  return (
    typeof error === 'object' &&
    error !== null &&
    typeof (error as { code?: unknown }).code === 'string' &&
    typeof (error as { message?: unknown }).message === 'string'
  );
}

/** A network failure in a few words: undici puts the useful part (ECONNREFUSED, ENOTFOUND…) in `cause`. */
function describe(error: unknown): string {
  const cause = (error as { cause?: { code?: unknown; message?: unknown } } | null)?.cause;
  if (cause && typeof cause.code === 'string') return cause.code;
  if (cause && typeof cause.message === 'string') return cause.message;
  return error instanceof Error ? error.message : String(error);
}
