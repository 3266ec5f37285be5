/**
 * The payload an A2A 1.0 agent card signature covers (A2A 1.0 §8.4.1): the card read as the
 * `AgentCard` message of a2a.proto, fields at their protobuf defaults left out, `signatures`
 * excluded, then RFC 8785 (JCS). Fields outside the 1.0 message (Ward's `url`, `methods`,
 * `transports`, the 0.3 names) are not covered: a verifier must not trust them for the signature.
 *
 * The reading is the official JavaScript SDK's (`canonicalizeAgentCard` in `@a2a-js/sdk`), so a
 * card Ward signs verifies there and the other way round: each known field is read as its proto
 * type (strings as `String(x)`, booleans as `Boolean(x)`), a non-optional boolean that is false is
 * left out, an `optional` one kept, and then every empty string, empty array and empty object is
 * removed, recursively (where the specification's example keeps a REQUIRED field that is empty, the
 * SDK drops it; Ward's cards have no such field, and test/mesh/card-signature.test.ts compares the
 * two readings). Keys are accepted in camelCase or in the proto's snake_case, as the SDK does.
 */
import canonicalize from 'canonicalize';
import { jsonShapeProblem } from '../json-shape.ts';

/**
 * The most a card may nest and hold (docs/mesh.md, "Signed cards"): checked, without recursion, before
 * any walk of the card below (which recurses), so a card nested 2 000 levels is refused, not a stack
 * overflow. A real card nests about eight levels and holds a few hundred values.
 */
export const CARD_MAX_DEPTH = 32;
export const CARD_MAX_MEMBERS = 10_000;

/** A card outside {@link CARD_MAX_DEPTH} / {@link CARD_MAX_MEMBERS}: never walked. */
export class CardShapeError extends RangeError {
  readonly pointer: string;
  constructor(kind: 'depth' | 'members', pointer: string) {
    super(kind === 'depth' ? `nests deeper than ${CARD_MAX_DEPTH} levels` : `holds more than ${CARD_MAX_MEMBERS} values`);
    this.name = 'CardShapeError';
    this.pointer = pointer;
  }
}

/** Throws a {@link CardShapeError} when `card` is outside the bounds every reading of a card relies on. */
export function assertCardShape(card: unknown): void {
  const problem = jsonShapeProblem(card, { maxDepth: CARD_MAX_DEPTH, maxMembers: CARD_MAX_MEMBERS });
  if (problem) throw new CardShapeError(problem.kind, problem.pointer);
}

type Kind =
  | 'string'
  | 'bool'
  | 'optionalBool'
  | 'strings'
  | 'struct'
  | { readonly message: Shape }
  | { readonly repeated: Shape }
  | { readonly map: Shape | 'string' };
type Shape = { readonly [field: string]: Kind };

const StringList: Shape = { list: 'strings' };
const SecurityRequirement: Shape = { schemes: { map: StringList } };
const scopes = { map: 'string' } as const;
const OAuthFlows: Shape = {
  authorizationCode: { message: { authorizationUrl: 'string', tokenUrl: 'string', refreshUrl: 'string', scopes, pkceRequired: 'bool' } },
  clientCredentials: { message: { tokenUrl: 'string', refreshUrl: 'string', scopes } },
  implicit: { message: { authorizationUrl: 'string', refreshUrl: 'string', scopes } },
  password: { message: { tokenUrl: 'string', refreshUrl: 'string', scopes } },
  deviceCode: { message: { deviceAuthorizationUrl: 'string', tokenUrl: 'string', refreshUrl: 'string', scopes } },
};
const SecurityScheme: Shape = {
  apiKeySecurityScheme: { message: { description: 'string', location: 'string', name: 'string' } },
  httpAuthSecurityScheme: { message: { description: 'string', scheme: 'string', bearerFormat: 'string' } },
  oauth2SecurityScheme: { message: { description: 'string', flows: { message: OAuthFlows }, oauth2MetadataUrl: 'string' } },
  openIdConnectSecurityScheme: { message: { description: 'string', openIdConnectUrl: 'string' } },
  mtlsSecurityScheme: { message: { description: 'string' } },
};

/** `AgentCard` of A2A 1.0's a2a.proto, without `signatures` (never part of the payload). */
const AgentCard: Shape = {
  name: 'string',
  description: 'string',
  supportedInterfaces: { repeated: { url: 'string', protocolBinding: 'string', tenant: 'string', protocolVersion: 'string' } },
  provider: { message: { url: 'string', organization: 'string' } },
  version: 'string',
  documentationUrl: 'string',
  capabilities: {
    message: {
      streaming: 'optionalBool',
      pushNotifications: 'optionalBool',
      extensions: { repeated: { uri: 'string', description: 'string', required: 'bool', params: 'struct' } },
      extendedAgentCard: 'optionalBool',
    },
  },
  securitySchemes: { map: SecurityScheme },
  securityRequirements: { repeated: SecurityRequirement },
  defaultInputModes: 'strings',
  defaultOutputModes: 'strings',
  skills: {
    repeated: {
      id: 'string',
      name: 'string',
      description: 'string',
      tags: 'strings',
      examples: 'strings',
      inputModes: 'strings',
      outputModes: 'strings',
      securityRequirements: { repeated: SecurityRequirement },
    },
  },
  iconUrl: 'string',
};

const isSet = (value: unknown): boolean => value !== null && value !== undefined;
const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);
const snake = (name: string): string => name.replace(/[A-Z]/g, (letter) => `_${letter.toLowerCase()}`);

function readMessage(shape: Shape, value: unknown): Record<string, unknown> {
  const object = isObject(value) ? value : {};
  const read: Record<string, unknown> = {};
  for (const [field, kind] of Object.entries(shape)) {
    const raw = isSet(object[field]) ? object[field] : object[snake(field)];
    const converted = readField(kind, raw);
    if (converted !== undefined) read[field] = converted;
  }
  return read;
}

function readField(kind: Kind, raw: unknown): unknown {
  if (kind === 'string') return isSet(raw) ? String(raw) : undefined;
  if (kind === 'bool') return isSet(raw) && Boolean(raw) ? true : undefined;
  if (kind === 'optionalBool') return isSet(raw) ? Boolean(raw) : undefined;
  if (kind === 'strings') return Array.isArray(raw) ? raw.map(String) : undefined;
  if (kind === 'struct') return isObject(raw) ? raw : undefined;
  if ('message' in kind) return isSet(raw) ? readMessage(kind.message, raw) : undefined;
  if ('repeated' in kind) return Array.isArray(raw) ? raw.map((item) => readMessage(kind.repeated, item)) : undefined;
  if (!isObject(raw)) return undefined;
  const map = kind.map;
  return Object.fromEntries(Object.entries(raw).map(([key, item]) => [key, map === 'string' ? String(item) : readMessage(map, item)]));
}

/** Empty strings, arrays and objects (and null) removed, recursively; `null` when nothing is left. */
function withoutEmpty(value: unknown): unknown {
  if (value === '' || value === null || value === undefined) return null;
  if (Array.isArray(value)) {
    const kept = value.map(withoutEmpty).filter((item) => item !== null);
    return kept.length > 0 ? kept : null;
  }
  if (typeof value === 'object') {
    const kept = Object.entries(value as Record<string, unknown>)
      .map(([key, item]) => [key, withoutEmpty(item)] as const)
      .filter(([, item]) => item !== null);
    return kept.length > 0 ? Object.fromEntries(kept) : null;
  }
  return value;
}

/** The card as its signature covers it, before serialisation (1.0 fields only, defaults left out). */
export function agentCardSignedContent(card: unknown): Record<string, unknown> {
  assertCardShape(card);
  return (withoutEmpty(readMessage(AgentCard, card)) ?? {}) as Record<string, unknown>;
}

/** The UTF-8 text a card signature is made over: {@link agentCardSignedContent} in RFC 8785 form. */
export function canonicalAgentCardPayload(card: unknown): string {
  // What is Ward's is above (which members are signed, read how); the serialisation is RFC 8785's own.
  return canonicalize(agentCardSignedContent(card)) as string;
}
