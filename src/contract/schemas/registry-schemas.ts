import { Type } from 'typebox';
import { Cursor, JurisdictionInput, JwksSchema, Nullable, PageLimit, StringEnum, Timestamp } from './common.ts';

const Alg = StringEnum(['RS256', 'ES256', 'EdDSA'] as const);
const Role = StringEnum(['root', 'sovereign_registry', 'organisation', 'agent'] as const);
const HttpUrl = Type.String({ format: 'uri', pattern: '^https?://', maxLength: 2048 });
const Jwk = Type.Unsafe<Record<string, unknown>>({ type: 'object', additionalProperties: true });

/** A trust anchor as a registration names it (spec: TrustAnchor); validity defaults to now, open-ended. */
export const TrustAnchorInputSchema = Type.Object(
  {
    key_id: Type.String({ minLength: 1, maxLength: 128 }),
    alg: Alg,
    jwks_uri: HttpUrl,
    thumbprint_sha256: Type.String({ pattern: '^[A-Za-z0-9_-]{43}$', description: 'RFC 7638 SHA-256 thumbprint, base64url' }),
    role: Type.Optional(Role),
    not_before: Type.Optional(Timestamp),
    not_after: Type.Optional(Nullable(Timestamp)),
  },
  { additionalProperties: false, title: 'TrustAnchorInput' },
);

/** A trust anchor as the registry answers it (spec: TrustAnchor): its own, or one of a child registry's. */
export const TrustAnchorSchema = Type.Object(
  {
    key_id: Type.String(),
    alg: Alg,
    jwks_uri: Type.String({ format: 'uri' }),
    thumbprint_sha256: Type.String(),
    role: Role,
    not_before: Timestamp,
    not_after: Nullable(Timestamp),
  },
  { title: 'TrustAnchor' },
);

export const RegisterRegistryBody = Type.Object(
  {
    display_name: Type.String({ minLength: 1, maxLength: 200 }),
    jurisdiction: JurisdictionInput,
    tier: StringEnum(['sovereign', 'organisational'] as const),
    trust_anchors: Type.Array(TrustAnchorInputSchema, { minItems: 1, maxItems: 10 }),
    api_base_url: Type.Optional(HttpUrl),
    name: Type.Optional(Type.String({ pattern: '^[a-z0-9][a-z0-9-]{0,62}$', description: 'last part of the registry URI; default: a slug of display_name' })),
    jwks: Type.Optional(Type.Object({ keys: Type.Array(Jwk, { minItems: 1, maxItems: 10 }) }, { additionalProperties: false, description: "the child's public keys; without them each anchor's jwks_uri is fetched" })),
  },
  { additionalProperties: false, title: 'ChildRegistryRegistration' },
);

export const RegistryRecordSchema = Type.Object(
  {
    registry_id: Type.String(),
    name: Type.String(),
    display_name: Type.String(),
    jurisdiction: Type.String(),
    tier: StringEnum(['sovereign', 'organisational'] as const),
    api_base_url: Nullable(Type.String()),
    trust_anchors: Type.Array(TrustAnchorSchema),
    jwks: JwksSchema,
    status: StringEnum(['active', 'revoked'] as const),
    revoked_at: Nullable(Timestamp),
    revocation_reason: Nullable(Type.String()),
    parent_id: Type.String({ description: 'the registry that delegated to it (this one)' }),
    delegation_chain: Type.Array(Type.String(), { description: 'registry URIs from the root down to this registry' }),
    version: Type.Integer(),
    created_at: Timestamp,
    updated_at: Timestamp,
  },
  { title: 'RegistryRecord' },
);

export const ListRegistriesQuery = Type.Object(
  {
    jurisdiction: Type.Optional(JurisdictionInput),
    tier: Type.Optional(StringEnum(['root', 'sovereign', 'organisational'] as const)),
    status: Type.Optional(StringEnum(['active', 'revoked'] as const)),
    cursor: Type.Optional(Cursor),
    limit: Type.Optional(PageLimit),
  },
  { additionalProperties: false },
);

export const RegistryListSchema = Type.Object({ registries: Type.Array(RegistryRecordSchema), next_cursor: Nullable(Type.String()) }, { title: 'RegistryList' });

export const RegistryIdParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 256 }) });

export const RevokeRegistryBody = Type.Object({ reason: Type.String({ minLength: 1, maxLength: 500 }) }, { additionalProperties: false });

export const FederationSubjectQuery = Type.Object({ sub: Type.String({ minLength: 1, maxLength: 256, description: 'registry URI' }) }, { additionalProperties: false });

export const DelegationGrantSchema = Type.Object(
  {
    sub: Type.String(),
    delegation_chain: Type.Array(Type.String()),
    statements: Type.Array(Type.String(), { description: 'delegation statements from the root down; the last is about sub' }),
    issuer_jwks: JwksSchema,
    expires_at: Timestamp,
  },
  { title: 'DelegationGrant' },
);

export const RegistryStatusSchema = Type.Object(
  {
    sub: Type.String(),
    status: StringEnum(['active', 'revoked'] as const),
    revoked_at: Nullable(Timestamp),
    reason: Nullable(Type.String()),
    status_token: Type.String({ description: 'JWS by the issuer (typ ward-status+jwt); the only part a verifier trusts' }),
  },
  { title: 'RegistryStatus' },
);

export const RotateKeyBody = Type.Object(
  {
    alg: Type.Optional(Alg),
    retire_after_seconds: Type.Optional(Type.Integer({ minimum: 0, maximum: 30 * 86_400, default: 86_400, description: 'how long the old public key stays published' })),
  },
  { additionalProperties: false },
);

export const RotatedKeySchema = Type.Object(
  {
    key_id: Type.String(),
    alg: Alg,
    not_before: Timestamp,
    not_after: Timestamp,
    previous: Nullable(Type.Object({ key_id: Type.String(), alg: Alg, not_after: Timestamp })),
  },
  { title: 'RotatedKey' },
);
