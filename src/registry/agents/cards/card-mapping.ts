/**
 * An A2A 1.0 agent card as an agent record (docs/mesh.md, "Signed cards"). Only the fields a card
 * signature covers are read (core/crypto/agent-card-canonical.ts), so a signed card's record holds
 * nothing the signature does not vouch for: `name` → `display_name`, `description`, each
 * `supportedInterfaces[]` → an endpoint (`JSONRPC` → `a2a-jsonrpc`, `GRPC` → `a2a-grpc`,
 * `HTTP+JSON` → `a2a-http-json`, once per URL and binding), `skills[].id` → skills (lower case,
 * other characters as `-`), the security schemes → `auth.*` features, `capabilities.streaming` and
 * `pushNotifications` → flags. Owner and policy tags come from the request, never from the card.
 */
import { createHash } from 'node:crypto';
import { Value } from 'typebox/value';
import { CardShapeError, agentCardSignedContent } from '../../../core/crypto/agent-card-canonical.ts';
import { WardError } from '../../../core/errors.ts';
import { UpdateAgentBody } from '../../../contract/schemas/agent-schemas.ts';
import type { AgentInput } from '../agent-document.ts';
import type { Owner } from '../../../contract/agent-record.ts';

const BINDINGS: Record<string, string> = { JSONRPC: 'a2a-jsonrpc', GRPC: 'a2a-grpc', 'HTTP+JSON': 'a2a-http-json' };

const SCHEME_FEATURES: Record<string, string> = {
  apiKeySecurityScheme: 'auth.api-key',
  httpAuthSecurityScheme: 'auth.http',
  oauth2SecurityScheme: 'auth.oauth2',
  openIdConnectSecurityScheme: 'auth.openid-connect',
  mtlsSecurityScheme: 'auth.mtls',
};

type Content = {
  name?: string;
  description?: string;
  supportedInterfaces?: Array<{ url?: string; protocolBinding?: string }>;
  skills?: Array<{ id?: string }>;
  securitySchemes?: Record<string, Record<string, unknown>>;
  capabilities?: { streaming?: boolean; pushNotifications?: boolean };
};

/** A skill id as the registry writes skills: `Triage Assess` → `triage-assess`. */
export function skillOf(id: string): string {
  return id
    .toLowerCase()
    .replace(/[^a-z0-9._-]+/g, '-')
    .replace(/[._-]{2,}/g, (run) => run[0] as string)
    .replace(/^[._-]+|[._-]+$/g, '');
}

const unique = <T>(values: T[]): T[] => [...new Set(values)];

/** The request's parts that are not the card's. */
export type CardRegistration = { owner?: Owner; policy_tags?: Record<string, unknown> };

/** The writable fields of a record for `card`, with the request's owner and policy tags. */
export function agentInputFromCard(card: Record<string, unknown>, registration: CardRegistration): AgentInput {
  let content: Content;
  try {
    content = agentCardSignedContent(card) as Content;
  } catch (error) {
    if (!(error instanceof CardShapeError)) throw error;
    throw new WardError('CARD_INVALID', `The document is not an A2A agent card: ${error.pointer || '/'} ${error.message}.`, {
      errors: [{ in: 'card', pointer: error.pointer || '/', reason: error.message }],
    });
  }
  const seen = new Set<string>();
  const endpoints = (content.supportedInterfaces ?? []).flatMap((entry) => {
    const protocol = BINDINGS[entry.protocolBinding ?? ''] ?? 'a2a-' + skillOf(entry.protocolBinding ?? 'unknown');
    const key = `${protocol} ${entry.url}`;
    if (entry.url === undefined || seen.has(key)) return [];
    seen.add(key);
    return [{ url: entry.url, protocol }];
  });
  const features = unique(Object.values(content.securitySchemes ?? {}).flatMap((scheme) => Object.keys(scheme).map((kind) => SCHEME_FEATURES[kind] ?? 'auth.other')));
  const input: AgentInput = {
    display_name: content.name ?? '',
    endpoints,
    capabilities: {
      protocols: unique(endpoints.map((endpoint) => endpoint.protocol)),
      skills: unique((content.skills ?? []).map((skill) => skillOf(skill.id ?? '')).filter((skill) => skill !== '')),
      features: features.sort(),
      ...(content.capabilities?.streaming === undefined ? {} : { streaming: content.capabilities.streaming }),
      ...(content.capabilities?.pushNotifications === undefined ? {} : { push_notifications: content.capabilities.pushNotifications }),
    },
    trust: {},
    ...(content.description === undefined ? {} : { description: content.description }),
    ...(registration.owner ? { owner: registration.owner } : {}),
    ...(registration.policy_tags ? { policy_tags: registration.policy_tags } : {}),
  };
  const problem = Value.Errors(UpdateAgentBody, input)[0];
  if (problem) {
    throw new WardError('CARD_INVALID', `The card cannot be held as an agent record: ${problem.instancePath || '/'} ${problem.message}.`, {
      errors: [{ in: 'card', pointer: problem.instancePath || '/', reason: problem.message }],
    });
  }
  return input;
}

/** The digest of what a card maps to: a re-read that maps to the same is no change. */
export function cardContentDigest(input: AgentInput): string {
  const { owner: _owner, policy_tags: _tags, ...fromCard } = input;
  return createHash('sha256').update(JSON.stringify(fromCard)).digest('hex');
}
