import type { ColumnType } from 'kysely';

/**
 * Table shapes as the query layer sees them. Timestamps are RFC 3339 UTC strings with milliseconds in
 * both back-ends (they sort as text), JSON documents are text, so one set of migrations and one
 * store implementation serve SQLite and PostgreSQL alike (docs/decisions.md).
 */
export type Database = {
  agents: AgentsTable;
  agent_skills: AgentSkillsTable;
  agent_versions: AgentVersionsTable;
  agent_endpoints: AgentEndpointsTable;
  endpoint_health: EndpointHealthTable;
  leases: LeasesTable;
  api_keys: ApiKeysTable;
  registry_secrets: RegistrySecretsTable;
  events: EventsTable;
  event_sequence: EventSequenceTable;
  idempotency_keys: IdempotencyKeysTable;
  signing_keys: SigningKeysTable;
  ledger_leaves: LedgerLeavesTable;
  ledger_nodes: LedgerNodesTable;
  usage_counts: UsageCountsTable;
  registries: RegistriesTable;
  federation_state: FederationStateTable;
  computer_use_runs: ComputerUseRunsTable;
  computer_use_turns: ComputerUseTurnsTable;
  agent_cards: AgentCardsTable;
};

export type AgentsTable = {
  id: string;
  agent_uri: string;
  jurisdiction: string;
  status: string;
  display_name: string;
  org_id: string | null;
  version: number;
  trust_state: string;
  trust_level: number;
  token_binding: ColumnType<string, string | undefined, string>;
  best_priority: ColumnType<number, number | undefined, number>;
  health_rank: ColumnType<number, number | undefined, number>;
  /** When the earliest piece of trust evidence lapses (RFC 3339), or null. */
  trust_expires_at: ColumnType<string | null, string | null | undefined, string | null>;
  endpoint_count: ColumnType<number, number | undefined, number>;
  /** The UTS #39 confusable skeleton of display_name (migration 019); NULL for a look-alike kept from before it, or a row an older build wrote. */
  name_skeleton: ColumnType<string | null, string | null | undefined, string | null>;
  record: string;
  created_at: string;
  updated_at: string;
};

/** One version of an agent record, as written (migration 014): the FHIR directory's `_history` and `vread`. */
export type AgentVersionsTable = { agent_id: string; version: number; status: string; record: string; updated_at: string };

/** A protocol among an agent's endpoints (migration 015): the FHIR directory's connection-type search. */
export type AgentEndpointsTable = { protocol: string; agent_id: string };

/** A skill an agent offers, with a copy of the agent's ranking columns (migration 009). */
export type AgentSkillsTable = {
  skill: string;
  agent_id: string;
  /** 1 when the agent is active and trust-validated. */
  discoverable: number;
  jurisdiction: string;
  trust_level: number;
  health_rank: number;
  best_priority: number;
  created_at: string;
  token_binding: string;
  /** ` a b c `: the agent's features (boolean flags included), space-separated and space-padded. */
  features: string;
  /** ` p q `: its declared and endpoint protocols, likewise. */
  protocols: string;
};

export type EndpointHealthTable = {
  agent_id: string;
  endpoint_index: number;
  url: string;
  status: string;
  reason: string | null;
  latency_ms: number | null;
  checked_at: string;
};

export type LeasesTable = { name: string; holder: string; expires_at: string; /** What the holder says of itself (instance heartbeats: JSON). */ detail: string | null };

export type ApiKeysTable = {
  key_id: string;
  org_id: string;
  display_name: string;
  tier: string;
  /** JSON array of scopes. */
  scopes: string;
  key_prefix: string;
  key_hash: string;
  /** JSON object of per-key limit overrides, or null. */
  limits: string | null;
  created_at: string;
  expires_at: string | null;
  revoked_at: string | null;
  last_used_at: string | null;
};

export type RegistrySecretsTable = { name: string; value: string; created_at: string };

/** PostgreSQL returns BIGINT as a string; the stores convert. */
export type EventsTable = {
  seq: ColumnType<number | string, number, never>;
  type: string;
  occurred_at: string;
  subject: string;
  data: string;
};

export type EventSequenceTable = {
  id: number;
  last_seq: ColumnType<number | string, number, number>;
  /** A random value each batch of write units writes (migration 011): which batch wrote last. */
  batch_token: ColumnType<string | null, string | null | undefined, string | null>;
};

export type IdempotencyKeysTable = {
  scope_key: string;
  request_hash: string;
  state: string;
  status_code: number | null;
  response_headers: string | null;
  response_body: string | null;
  locked_until: string;
  expires_at: string;
  created_at: string;
  /** The instance holding an in-progress claim (its heartbeat id); null from a registry not listening. */
  holder: string | null;
  /** The claim's own random token: the answer is stored only while it is still the row's. */
  claim_token: string | null;
};

export type SigningKeysTable = {
  kid: string;
  alg: string;
  public_jwk: string;
  private_jwk: string;
  active: number | null;
  not_before: string;
  not_after: string | null;
  created_at: string;
};

/** One transparency-ledger leaf: the entry text whose UTF-8 bytes are hashed, and that hash (hex). */
export type LedgerLeavesTable = {
  leaf_index: ColumnType<number | string, number, never>;
  seq: ColumnType<number | string, number, never>;
  leaf_hash: string;
  entry: string;
  /** The subject of the event it records (migration 012); null only where an entry names none. */
  subject: string | null;
};

/** A complete perfect subtree of the ledger (level 0 = leaf); written once, never updated. */
export type LedgerNodesTable = {
  level: number;
  node_index: ColumnType<number | string, number, never>;
  hash: string;
};

/** Requests per API key, UTC day (`YYYY-MM-DD`) and operation class; BIGINT, so a string from PostgreSQL. */
export type UsageCountsTable = {
  key_id: string;
  day: string;
  class: string;
  org_id: string;
  count: ColumnType<number | string, number, number>;
};

/** A child registry this registry delegated to; JSON documents as text. */
export type RegistriesTable = {
  id: string;
  name: string;
  display_name: string;
  jurisdiction: string;
  tier: string;
  api_base_url: string | null;
  /**
   * The OpenID Federation entity identifier: `api_base_url` without a trailing slash, unique among
   * active rows (migration 017b). Null without an address, and for rows an older build wrote or an
   * active duplicate the migration found (the store's lookup then reads `api_base_url`).
   */
  entity_id: string | null;
  trust_anchors: string;
  jwks: string;
  status: string;
  revoked_at: string | null;
  revocation_reason: string | null;
  version: number;
  /**
   * When the last entity configuration accepted from the child was issued, ms (0: none yet). BIGINT:
   * a string from PostgreSQL; the store converts.
   */
  entity_iat: number;
  created_at: string;
  updated_at: string;
};

/** Named JSON documents about this registry's own place in the federation. */
export type FederationStateTable = { name: string; value: string; updated_at: string };

/** A computer-use run (docs/computer-use.md); `headless` is 0 or 1, `event_seqs` a JSON array. */
export type ComputerUseRunsTable = {
  session_id: string;
  status: string;
  task: string;
  persona: string;
  url: string;
  max_turns: number;
  headless: number;
  requested_by: string | null;
  instance_id: string;
  turns: ColumnType<number, number | undefined, number>;
  final_answer: string | null;
  failure_reason: string | null;
  event_seqs: ColumnType<string, string | undefined, string>;
  created_at: string;
  started_at: string | null;
  ended_at: string | null;
  updated_at: string;
  /** The model name the run asked (COMPUTER_USE_MODEL when it was requested); null for runs from before it was kept. */
  model: ColumnType<string | null, string | null | undefined, string | null>;
};

/** One turn of a run: `actions` is a JSON array; `screenshot` base64 PNG, null when withheld. */
export type ComputerUseTurnsTable = {
  session_id: string;
  turn: number;
  actions: string;
  model_text: string | null;
  screenshot_sha256: string;
  screenshot: string | null;
  created_at: string;
};

/** An agent registered from its A2A card (migration 013): the card's URL and the last reading's outcome. */
export type AgentCardsTable = {
  agent_id: string;
  card_url: string;
  /** SHA-256 of the record fields the card mapped to when last accepted. */
  content_digest: string;
  /** The `kid` of the signature that verified, null for an unsigned card (or signatures off). */
  signed_by: string | null;
  read_at: string;
  /** Why the last re-read failed; null when it succeeded. */
  last_error: string | null;
};
