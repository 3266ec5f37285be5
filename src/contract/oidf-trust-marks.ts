// OpenID Federation 1.0 trust marks as Ward issues them (OIDF §7, §8.4, §8.6; docs/federation.md,
// "Trust marks"): one table of the mark types, each with its subject kind and meaning (the docs render
// it; the registry issues and judges marks from it), the `typ` values and media types, and the status
// values of the trust mark status endpoint.

/** OIDF §7.1: a trust mark is a JWT typed so. */
export const TRUST_MARK_TYP = 'trust-mark+jwt';
export const TRUST_MARK_MEDIA_TYPE = 'application/trust-mark+jwt';
/** OIDF §8.4.2: the signed answer of the trust mark status endpoint. */
export const TRUST_MARK_STATUS_TYP = 'trust-mark-status-response+jwt';
export const TRUST_MARK_STATUS_MEDIA_TYPE = 'application/trust-mark-status-response+jwt';

/** OIDF §8.4.2: what the status endpoint says of a mark. */
export const TRUST_MARK_STATUSES = ['active', 'expired', 'revoked', 'invalid'] as const;
export type TrustMarkStatus = (typeof TRUST_MARK_STATUSES)[number];

/** What a mark is about: an agent of the issuing registry, or a child registry of it. */
export type TrustMarkSubjectKind = 'agent' | 'registry';

/**
 * The trust marks Ward issues: what the issuing registry itself checked, nothing an agent merely
 * declares. Identifiers are URNs, the same in every deployment, so a verifier can pin them
 * (docs/decisions.md 69).
 */
export const WARD_TRUST_MARKS = [
  {
    type: 'urn:ward:trust-mark:trust-validated',
    subject: 'agent',
    meaning:
      "The issuing registry validated the agent's trust material (trust_validation `validated`, level 1 or more: a certificate inside its window, a signature that verifies with the record's or the registry's keys, or an attestation by a known issuer) and the agent is active. `ward_trust_level` carries the level; the mark lapses no later than the first certificate does.",
  },
  {
    type: 'urn:ward:trust-mark:attested',
    subject: 'agent',
    meaning:
      'The issuing registry verified a third-party attestation of the agent (trust level 3: a JWT by an issuer the registry knows, checked with that issuer\'s keys only) and the agent is active.',
  },
  {
    type: 'urn:ward:trust-mark:delegated-registry',
    subject: 'registry',
    meaning:
      'The issuing registry registered the subject as its child at the tier below its own, in its jurisdiction (contract §5 tier rules), pinned its keys by RFC 7638 thumbprint, and has not revoked it. Carried in the child\'s entity configuration.',
  },
] as const satisfies ReadonlyArray<{ type: string; subject: TrustMarkSubjectKind; meaning: string }>;

export type WardTrustMarkType = (typeof WARD_TRUST_MARKS)[number]['type'];

/** The table entry of `type`, or undefined for a type Ward does not issue. */
export function wardTrustMark(type: string): (typeof WARD_TRUST_MARKS)[number] | undefined {
  return WARD_TRUST_MARKS.find((mark) => mark.type === type);
}

/** The claims of a Ward trust mark (OIDF §7.1, plus Ward's own about an agent). */
export type TrustMarkClaims = {
  iss: string;
  sub: string;
  trust_mark_type: string;
  /**
   * The same value as `trust_mark_type`, under the name drafts of OIDF before 1.0 final gave it, which
   * resolvers such as @openid-federation/core 0.2.1 still require (docs/decisions.md 71).
   */
  id: string;
  iat: number;
  exp: number;
  /** The agent's `registry://` URI, when the mark is about an agent. */
  ward_agent_id?: string;
  /** The agent's trust level when the mark was issued (trust-validated, attested). */
  ward_trust_level?: number;
  /** The registry's `registry://` URI, when the mark is about a registry. */
  ward_registry_id?: string;
};

/**
 * An entry of `trust_marks` (OIDF §3.1.1: in entity configurations; Ward also puts agent marks in trust
 * bundles), with `id` beside `trust_mark_type` for pre-final resolvers (see {@link TrustMarkClaims}).
 */
export type TrustMarkEntry = { trust_mark_type: string; trust_mark: string; id?: string };

/** The entry listing `trustMark` of `type`. */
export function trustMarkEntry(type: string, trustMark: string): TrustMarkEntry {
  return { trust_mark_type: type, id: type, trust_mark: trustMark };
}

/** The claims of a trust mark status response (OIDF §8.4.2). */
export type TrustMarkStatusClaims = { iss: string; iat: number; trust_mark: string; status: TrustMarkStatus };

/**
 * The entity identifier Ward gives an agent (docs/decisions.md 69): the URL of its record at the
 * registry that holds it, `{registry entity id}/v1/agents/{percent-encoded agent URI}`. Agents serve no
 * entity configuration (yet); the identifier names them in the `sub` of their trust marks.
 */
export function agentEntityIdentifier(registryEntityId: string, agentId: string): string {
  return `${registryEntityId.replace(/\/+$/, '')}/v1/agents/${encodeURIComponent(agentId)}`;
}

/** The agent URI an agent entity identifier of `registryEntityId` names, or undefined. */
export function agentIdFromEntityIdentifier(registryEntityId: string, entityId: string): string | undefined {
  const prefix = `${registryEntityId.replace(/\/+$/, '')}/v1/agents/`;
  if (!entityId.startsWith(prefix)) return undefined;
  const rest = entityId.slice(prefix.length);
  if (rest === '' || rest.includes('/')) return undefined;
  try {
    return decodeURIComponent(rest);
  } catch {
    return undefined;
  }
}
