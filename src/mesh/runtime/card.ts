/**
 * The capability card at `/.well-known/agent-card.json` (contract §10): `{name, description, url,
 * version, protocol, methods[], skills[], transports[], authentication, capabilities}`. The same
 * document is a valid A2A v0.3 agent card (`protocolVersion`, `preferredTransport`, input/output
 * modes, `securitySchemes`), so A2A clients can start from it.
 */
import type { AgentInfo } from './mesh-agent.ts';

export const MESH_PROTOCOL = 'mesh-a2a-jsonrpc';

export type CardInput = {
  readonly info: AgentInfo;
  /** Where JSON-RPC requests go (`POST`); the gateway's `/rpc/<alias>` when behind it. */
  readonly url: string;
  readonly methods: readonly string[];
  readonly didVerify: boolean;
  readonly maxTokenTtlSeconds: number;
};

function webSocketUrl(url: string): string {
  const ws = new URL(url.replace(/^http/, 'ws'));
  ws.pathname = `${ws.pathname.replace(/\/+$/, '')}/ws`;
  return ws.toString();
}

export function buildAgentCard(input: CardInput) {
  const { info, url } = input;
  return {
    name: info.name,
    description: info.description,
    url,
    version: info.version,
    protocol: MESH_PROTOCOL,
    protocolVersion: '0.3.0',
    preferredTransport: 'JSONRPC',
    methods: [...input.methods].sort(),
    skills: info.skills.map((skill) => ({ ...skill, tags: [...skill.tags] })),
    transports: [
      { type: 'jsonrpc', method: 'POST', url },
      { type: 'sse', methods: ['tasks/sendSubscribe', 'tasks/resubscribe', 'message/stream'], url, resume: 'Last-Event-ID' },
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
    securitySchemes: { mesh_jwt: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' } },
    security: [{ mesh_jwt: [] }],
    capabilities: {
      streaming: true,
      pushNotifications: false,
      stateTransitionHistory: true,
      stream_resume: true,
      websocket: true,
      consent_support: info.consentSupport ?? false,
    },
    defaultInputModes: ['text/plain', 'application/json'],
    defaultOutputModes: ['text/plain', 'application/json'],
  };
}
