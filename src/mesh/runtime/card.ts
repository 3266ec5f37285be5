/**
 * The capability card at `/.well-known/agent-card.json` (contract §10): `{name, description, url,
 * version, protocol, methods[], skills[], transports[], authentication, capabilities}`. The same
 * document is an A2A agent card for both protocol versions Ward speaks: v0.3 reads `url`,
 * `protocolVersion` and `preferredTransport`; 1.0 reads `supportedInterfaces`, which lists the one
 * URL twice (1.0 first, as 1.0 clients prefer it). The security schemes differ in shape between the
 * versions, so they follow the `A2A-Version` header: 1.0's unless the caller asks for 0.x, which also
 * gets the contract's `authentication` object (unknown to 1.0 clients). 1.0 callers may fetch the
 * same card, authenticated, with `GetExtendedAgentCard` (`capabilities.extendedAgentCard`).
 * A card holds no secrets: it is served without credentials.
 */
import type { AgentInfo } from './mesh-agent.ts';
import { DEFAULT_INPUT_MODES } from './tasks/file-parts.ts';

export const MESH_PROTOCOL = 'mesh-a2a-jsonrpc';

export type CardInput = {
  readonly info: AgentInfo;
  /** Where JSON-RPC requests go (`POST`); the gateway's `/rpc/<alias>` when behind it. */
  readonly url: string;
  readonly methods: readonly string[];
  readonly didVerify: boolean;
  readonly maxTokenTtlSeconds: number;
  /** The caller's `A2A-Version`: `0.x` gets the v0.3 and contract card, anything else 1.0's. */
  readonly a2aVersion?: string | undefined;
};

/** `A2A-Version: 1.0` (or 1.x) asks for 1.0 shapes. */
export function wantsA2aV1(version: string | undefined): boolean {
  return version !== undefined && /^\s*1(\.\d+)?\s*$/.test(version);
}

/**
 * `A2A-Version: 0.x` asks for the v0.3 card, which is also the contract's (§10: its `authentication`
 * object). Every other caller gets 1.0's shapes: a card is read before any version is agreed, and
 * 1.0 clients (the official SDKs, the TCK) fetch it without the header.
 */
export function wantsA2aV03(version: string | undefined): boolean {
  return version !== undefined && /^\s*0(\.\d+)*\s*$/.test(version);
}

function securityFor(a2aVersion: string | undefined) {
  return !wantsA2aV03(a2aVersion)
    ? {
        securitySchemes: { mesh_jwt: { httpAuthSecurityScheme: { scheme: 'Bearer', bearerFormat: 'JWT' } } },
        securityRequirements: [{ schemes: { mesh_jwt: { list: [] } } }],
      }
    : { securitySchemes: { mesh_jwt: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' } }, security: [{ mesh_jwt: [] }] };
}

function webSocketUrl(url: string): string {
  const ws = new URL(url.replace(/^http/, 'ws'));
  ws.pathname = `${ws.pathname.replace(/\/+$/, '')}/ws`;
  return ws.toString();
}

/** The card for `input.a2aVersion`: 1.0's shape unless the caller asked for v0.3 (and the contract's fields). */
export function buildAgentCard(input: CardInput) {
  const card = contractAndA2aCard(input);
  if (wantsA2aV03(input.a2aVersion)) return card;
  const { authentication: _contractOnly, protocolVersion: _v03Version, preferredTransport: _v03Transport, ...v1 } = card;
  return { ...v1, capabilities: { ...card.capabilities, extendedAgentCard: true } };
}

function contractAndA2aCard(input: CardInput) {
  const { info, url } = input;
  return {
    name: info.name,
    description: info.description,
    url,
    version: info.version,
    protocol: MESH_PROTOCOL,
    protocolVersion: '0.3.0',
    preferredTransport: 'JSONRPC',
    supportedInterfaces: [
      { url, protocolBinding: 'JSONRPC', protocolVersion: '1.0' },
      { url, protocolBinding: 'JSONRPC', protocolVersion: '0.3' },
    ],
    methods: [...input.methods].sort(),
    skills: info.skills.map((skill) => ({ ...skill, tags: [...skill.tags] })),
    transports: [
      { type: 'jsonrpc', method: 'POST', url },
      {
        type: 'sse',
        methods: ['tasks/sendSubscribe', 'tasks/resubscribe', 'message/stream', 'SendStreamingMessage', 'SubscribeToTask'],
        url,
        resume: 'Last-Event-ID',
      },
      { type: 'websocket', url: webSocketUrl(url), notifications: ['tasks/status'] },
    ],
    authentication: {
      schemes: ['bearer'],
      token: 'JWT',
      algorithms: ['HS256'],
      required_scope: 'mesh:invoke',
      max_lifetime_s: input.maxTokenTtlSeconds,
      agent_id_header: 'X-Agent-ID',
      body_signature: input.didVerify ? { header: 'X-Mesh-Signature', format: 'detached-jws', key_source: 'did:web' } : null,
    },
    ...securityFor(input.a2aVersion),
    capabilities: {
      streaming: true,
      pushNotifications: false,
      stateTransitionHistory: true,
      stream_resume: true,
      websocket: true,
      consent_support: info.consentSupport ?? false,
    },
    defaultInputModes: [...(info.inputModes ?? DEFAULT_INPUT_MODES)],
    defaultOutputModes: ['text/plain', 'application/json'],
  };
}
