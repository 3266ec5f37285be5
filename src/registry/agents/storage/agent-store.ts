import { sql, type Kysely, type Selectable, type SelectQueryBuilder } from 'kysely';
import { featuresOf, protocolsOf, tokenPattern, tokenText } from '../../../core/agent-capabilities.ts';
import { insertRows, isPostgres, runCompiled } from '../../storage/compiled-statements.ts';
import type { AgentsTable, Database } from '../../storage/schema.ts';
import { endpointProtocolsOf, insertEndpointRows, replaceEndpointRows } from './agent-endpoint-store.ts';
import { insertAgentVersion } from './agent-version-store.ts';
import { refusePhiContent } from '../../storage/phi-boundary.ts';

/**
 * Agent rows. The indexed columns (status, jurisdiction, owner, version, trust state) live beside the
 * JSON document the owner wrote, so filters use indexes and the document stays one value.
 */
export type AgentRow = Omit<Selectable<AgentsTable>, 'record'> & { record: Record<string, unknown> };

type Db = Kysely<Database>;

type SelectedAgent = Omit<AgentRow, 'record'> & { record: string };

function fromRow(row: SelectedAgent): AgentRow {
  return {
    ...row,
    version: Number(row.version),
    trust_level: Number(row.trust_level),
    best_priority: Number(row.best_priority),
    health_rank: Number(row.health_rank),
    record: JSON.parse(row.record),
  };
}

function toRow(agent: AgentRow) {
  return { ...agent, record: JSON.stringify(agent.record) };
}

/**
 * The agent's ranking columns as copied onto each of its skill rows, which discovery reads alone
 * (migration 009). Every write of those columns goes through this file and copies them.
 */
function rankOf(agent: AgentRow) {
  const document = agent.record as Parameters<typeof protocolsOf>[0];
  return {
    features: tokenText(featuresOf(document.capabilities)),
    protocols: tokenText(protocolsOf(document)),
    discoverable: agent.status === 'active' && agent.trust_state === 'validated' ? 1 : 0,
    jurisdiction: agent.jurisdiction,
    trust_level: agent.trust_level,
    health_rank: agent.health_rank,
    best_priority: agent.best_priority,
    created_at: agent.created_at,
    token_binding: agent.token_binding,
  };
}

/**
 * Inserts an agent, its first version row and its skill index rows, unless another live (not revoked)
 * agent of its organisation has its display name, or one that looks the same: then nothing is written
 * and the answer is false. The unique indexes decide (`agents_org_name_live`, migration 010, on the
 * name; `agents_org_skeleton_live`, migration 019, on its confusable skeleton), so no read comes first.
 */
export async function insertAgent(tx: Db, agent: AgentRow, skills: readonly string[]): Promise<boolean> {
  refusePhiContent(agent.record); // whatever brought the content: a body, a card, a re-read (phi-boundary.ts)
  // A member left undefined is a column left out (its default applies), named in the statement's
  // shape, so a kept statement never binds undefined where a built one would have left the column out.
  const row = Object.fromEntries(Object.entries(toRow(agent)).filter(([, value]) => value !== undefined)) as ReturnType<typeof toRow>;
  const columns = Object.keys(row) as (keyof typeof row)[];
  const agentValues = columns.map((column) => row[column]);
  if (isPostgres(tx)) {
    const skillNames = [...new Set(skills)];
    const protocols = endpointProtocolsOf(agent.record);
    const rank = rankOf(agent);
    // One statement, one round trip while the batch holds the write lock: the skill rows are inserted
    // only from the agent row the first insert returned, so a name taken leaves no skill rows behind.
    // Each select-list parameter is cast to its column's type (PostgreSQL would read it as text).
    const build = () => {
      const statement = sql<{ inserted: number }>`
        with agent as (
          insert into agents (${sql.join(columns.map((column) => sql.ref(column)))}) values (${sql.join(agentValues)})
          on conflict do nothing
          returning id, version, status, record, updated_at
        ), versions as (
          insert into agent_versions (agent_id, version, status, record, updated_at)
          select id, version, status, record, updated_at from agent
        ), endpoints as (
          insert into agent_endpoints (protocol, agent_id)
          select p.protocol, agent.id from agent, unnest(${protocols}::text[]) as p(protocol)
        ), skills as (
          insert into agent_skills (skill, agent_id, features, protocols, discoverable, jurisdiction, trust_level,
                                    health_rank, best_priority, created_at, token_binding)
          select s.skill, agent.id, ${rank.features}::text, ${rank.protocols}::text, ${rank.discoverable}::integer,
                 ${rank.jurisdiction}::text, ${rank.trust_level}::integer, ${rank.health_rank}::integer,
                 ${rank.best_priority}::integer, ${rank.created_at}::text, ${rank.token_binding}::text
          from agent, unnest(${skillNames}::text[]) as s(skill)
        )
        select count(*)::integer as inserted from agent`;
      return { compile: () => statement.compile(tx) };
    };
    const parameters = [
      ...agentValues,
      protocols,
      rank.features, rank.protocols, rank.discoverable, rank.jurisdiction, rank.trust_level,
      rank.health_rank, rank.best_priority, rank.created_at, rank.token_binding, skillNames,
    ];
    const { rows } = await runCompiled(tx, `insert agents (${columns.join(',')}) with agent_skills, unless the name is taken`, parameters, build);
    return rows[0]?.inserted === 1;
  }
  const build = () =>
    tx.insertInto('agents').values(row).onConflict((oc) => oc.doNothing());
  const inserted = await runCompiled(tx, `insert agents (${columns.join(',')}), unless the name is taken`, agentValues, build);
  if (Number(inserted.numAffectedRows ?? 0n) !== 1) return false;
  await insertAgentVersion(tx, row);
  await insertEndpointRows(tx, agent.id, endpointProtocolsOf(agent.record));
  await insertRows(tx, 'agent_skills', skillRowsOf(agent, skills));
  return true;
}

/** Replaces the skill index rows of an agent (after an update changed its capabilities). */
export async function replaceSkills(tx: Db, agent: AgentRow, skills: readonly string[]): Promise<void> {
  await tx.deleteFrom('agent_skills').where('agent_id', '=', agent.id).execute();
  await writeSkills(tx, agent, skills);
}

async function writeSkills(tx: Db, agent: AgentRow, skills: readonly string[]): Promise<void> {
  await insertRows(tx, 'agent_skills', skillRowsOf(agent, skills));
}

function skillRowsOf(agent: AgentRow, skills: readonly string[]) {
  if (skills.length === 0) return [];
  const rank = rankOf(agent);
  return [...new Set(skills)].map((skill) => ({ skill, agent_id: agent.id, ...rank }));
}

export async function findAgent(db: Db, id: string): Promise<AgentRow | undefined> {
  const row = await db.selectFrom('agents').selectAll().where('id', '=', id).executeTakeFirst();
  return row ? fromRow(row) : undefined;
}

/**
 * Replaces an agent row only if its version is still `expectedVersion`. Returns false when another
 * write got there first (the caller answers VERSION_CONFLICT).
 */
export async function replaceAgent(tx: Db, agent: AgentRow, expectedVersion: number, before?: Record<string, unknown>): Promise<boolean> {
  refusePhiContent(agent.record, 'record', before);
  const { id, agent_uri: _uri, created_at: _created, ...changes } = toRow(agent);
  const result = await tx
    .updateTable('agents')
    .set(changes)
    .where('id', '=', id)
    .where('version', '=', expectedVersion)
    .executeTakeFirst();
  if (Number(result.numUpdatedRows) !== 1) return false;
  await insertAgentVersion(tx, { ...changes, id });
  await replaceEndpointRows(tx, id, endpointProtocolsOf(agent.record));
  await tx.updateTable('agent_skills').set(rankOf(agent)).where('agent_id', '=', id).execute();
  return true;
}

/**
 * Whether another non-revoked agent of the organisation has this display name, or one that looks the
 * same (its confusable skeleton; migration 019). A row without a skeleton (an older build's, or a
 * look-alike kept from before 019) still counts by its exact name.
 */
export async function hasNameConflict(
  db: Db,
  orgId: string,
  name: { displayName: string; skeleton: string },
  exceptId?: string,
): Promise<boolean> {
  const build = () => {
    let query = db
      .selectFrom('agents')
      .select('id')
      .where('org_id', '=', orgId)
      .where((eb) => eb.or([eb('name_skeleton', '=', name.skeleton), eb('display_name', '=', name.displayName)]))
      .where('status', '!=', 'revoked');
    if (exceptId) query = query.where('id', '!=', exceptId);
    return query.limit(1);
  };
  const base = [orgId, name.skeleton, name.displayName, 'revoked'];
  const parameters = exceptId ? [...base, exceptId, 1] : [...base, 1];
  const { rows } = await runCompiled(db, exceptId ? 'agent name or look-alike conflict, except one' : 'agent name or look-alike conflict', parameters, build);
  return rows.length > 0;
}

/**
 * Filters of the agent list. `nameContains` matches the display name in any (ASCII) case; `id` one
 * agent; together they are alternatives (a search box takes either).
 */
export type AgentFilter = { jurisdiction?: string; status?: string; orgId?: string; nameContains?: string; id?: string };

// Every list query narrows by the same filter, whether it reads a page or counts.
function filtered<Q extends SelectQueryBuilder<Database, 'agents', object>>(query: Q, filter: AgentFilter): Q {
  let narrowed = query;
  if (filter.jurisdiction) narrowed = narrowed.where('jurisdiction', '=', filter.jurisdiction) as Q;
  if (filter.status) narrowed = narrowed.where('status', '=', filter.status) as Q;
  if (filter.orgId) narrowed = narrowed.where('org_id', '=', filter.orgId) as Q;
  if (filter.nameContains !== undefined || filter.id !== undefined) {
    const pattern = `%${(filter.nameContains ?? '').toLowerCase().replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
    narrowed = narrowed.where((eb) =>
      eb.or([
        ...(filter.nameContains !== undefined ? [sql<boolean>`lower(display_name) like ${pattern} escape '\\'`] : []),
        ...(filter.id !== undefined ? [eb('id', '=', filter.id)] : []),
      ]),
    ) as Q;
  }
  return narrowed;
}

/** A page of agents in id (creation) order after `afterId`. */
export async function listAgentPage(
  db: Db,
  filter: AgentFilter,
  page: { afterId?: string; limit: number },
): Promise<AgentRow[]> {
  let query = filtered(db.selectFrom('agents').selectAll(), filter);
  if (page.afterId) query = query.where('id', '>', page.afterId);
  const rows = await query.orderBy('id', 'asc').limit(page.limit).execute();
  return rows.map(fromRow);
}

export async function countAgents(db: Db, filter: AgentFilter): Promise<number> {
  const query = filtered(db.selectFrom('agents').select((eb) => eb.fn.countAll<number | string>().as('count')), filter);
  const row = await query.executeTakeFirstOrThrow();
  return Number(row.count);
}

export type DiscoveryFilter = {
  skill: string;
  jurisdiction?: string;
  tokenBinding?: string;
  /** Narrow in SQL to agents with every one of these features (a superset: the caller checks exactly). */
  features?: readonly string[];
  /** Narrow in SQL to agents that speak this protocol (likewise). */
  protocol?: string;
  /** Agents of this jurisdiction rank before others at equal trust and health. */
  preferredJurisdiction: string;
};

/**
 * The ids of a slice of the discoverable agents with a skill (active and trust-validated), in ranking
 * order: trust level, best endpoint health, jurisdiction match, best endpoint priority, age, id. The
 * caller reads the records (`findAgents`), or only their versions when it keeps records already.
 *
 * The ranking is an index range read on the skill rows alone (migration 009): with a jurisdiction
 * filter the match term is the same for every candidate, so one range of the (skill, jurisdiction)
 * index is the answer; without one, the preferred jurisdiction's range and the others' range are read
 * to the slice's end and merged.
 */
export async function rankDiscoverableBySkill(
  db: Db,
  filter: DiscoveryFilter,
  page: { offset: number; limit: number },
): Promise<string[]> {
  const ranked = filter.jurisdiction
    ? await rankedSkillRows(db, filter, { jurisdiction: filter.jurisdiction }, page)
    : mergeRanked(
        filter.preferredJurisdiction,
        ...(await Promise.all([
          rankedSkillRows(db, filter, { jurisdiction: filter.preferredJurisdiction }, { offset: 0, limit: page.offset + page.limit }),
          rankedSkillRows(db, filter, { notJurisdiction: filter.preferredJurisdiction }, { offset: 0, limit: page.offset + page.limit }),
        ])),
      ).slice(page.offset, page.offset + page.limit);
  return ranked.map((row) => row.agent_id);
}

/** The agents with these ids, in no particular order (an id without an agent is left out). */
export async function findAgents(db: Db, ids: readonly string[]): Promise<AgentRow[]> {
  if (ids.length === 0) return [];
  const rows = await db.selectFrom('agents').selectAll().where('id', 'in', ids).execute();
  return rows.map(fromRow);
}

/** The current version and `updated_at` of each of these agents (an id without an agent is left out). */
export async function agentVersions(db: Db, ids: readonly string[]): Promise<Map<string, { version: number; updatedAt: string }>> {
  if (ids.length === 0) return new Map();
  const rows = await db.selectFrom('agents').select(['id', 'version', 'updated_at']).where('id', 'in', ids).execute();
  return new Map(rows.map((row) => [row.id, { version: Number(row.version), updatedAt: row.updated_at }]));
}

type RankedSkillRow = { agent_id: string; jurisdiction: string; trust_level: number; health_rank: number; best_priority: number; created_at: string };

async function rankedSkillRows(
  db: Db,
  filter: DiscoveryFilter,
  where: { jurisdiction: string } | { notJurisdiction: string },
  page: { offset: number; limit: number },
): Promise<RankedSkillRow[]> {
  let query = db
    .selectFrom('agent_skills')
    .select(['agent_id', 'jurisdiction', 'trust_level', 'health_rank', 'best_priority', 'created_at'])
    .where('skill', '=', filter.skill)
    // A literal, so both planners see the partial indexes' condition.
    .where(sql<boolean>`discoverable = 1`);
  query = 'jurisdiction' in where ? query.where('jurisdiction', '=', where.jurisdiction) : query.where('jurisdiction', '!=', where.notJurisdiction);
  if (filter.tokenBinding) query = query.where('token_binding', '=', filter.tokenBinding);
  for (const feature of filter.features ?? []) query = query.where(sql<boolean>`features like ${tokenPattern(feature)} escape '\\'`);
  if (filter.protocol) query = query.where(sql<boolean>`protocols like ${tokenPattern(filter.protocol)} escape '\\'`);
  const rows = await query
    .orderBy('trust_level', 'desc')
    .orderBy('health_rank', 'desc')
    .orderBy('best_priority', 'asc')
    .orderBy('created_at', 'asc')
    .orderBy('agent_id', 'asc')
    .offset(page.offset)
    .limit(page.limit)
    .execute();
  return rows.map((row) => ({ ...row, trust_level: Number(row.trust_level), health_rank: Number(row.health_rank), best_priority: Number(row.best_priority) }));
}

/** Two ranked lists (the preferred jurisdiction's and the rest) as one, in ranking order. */
function mergeRanked(preferred: string, home: RankedSkillRow[], others: RankedSkillRow[]): RankedSkillRow[] {
  const before = (a: RankedSkillRow, b: RankedSkillRow) =>
    a.trust_level !== b.trust_level
      ? a.trust_level > b.trust_level
      : a.health_rank !== b.health_rank
        ? a.health_rank > b.health_rank
        : (a.jurisdiction === preferred) !== (b.jurisdiction === preferred)
          ? a.jurisdiction === preferred
          : a.best_priority !== b.best_priority
            ? a.best_priority < b.best_priority
            : a.created_at !== b.created_at
              ? a.created_at < b.created_at
              : a.agent_id < b.agent_id;
  const merged: RankedSkillRow[] = [];
  let h = 0;
  let o = 0;
  while (h < home.length || o < others.length) {
    const next = o >= others.length || (h < home.length && before(home[h] as RankedSkillRow, others[o] as RankedSkillRow)) ? home[h++] : others[o++];
    merged.push(next as RankedSkillRow);
  }
  return merged;
}

/** Sets the health rank of an agent without touching its version (health is not owner data). */
export async function setHealthRank(tx: Db, agentId: string, healthRank: number): Promise<void> {
  await tx.updateTable('agents').set({ health_rank: healthRank }).where('id', '=', agentId).execute();
  await tx.updateTable('agent_skills').set({ health_rank: healthRank }).where('agent_id', '=', agentId).execute();
}

/** Every active agent with at least one endpoint to probe, in id order, a page at a time. */
export async function listActiveAgentPage(db: Db, page: { afterId?: string; limit: number }): Promise<AgentRow[]> {
  let query = db.selectFrom('agents').selectAll().where('status', '=', 'active');
  if (page.afterId) query = query.where('id', '>', page.afterId);
  const rows = await query.orderBy('id', 'asc').limit(page.limit).execute();
  return rows.map(fromRow);
}

/** The agents that are not revoked: the ones a tier's limit counts and whose names are taken. */
function liveAgents(db: Db) {
  return db.selectFrom('agents').where('status', '!=', 'revoked');
}

/** Non-revoked agents of an organisation (the tier's agent limit counts these). */
export async function countOrgAgents(db: Db, orgId: string): Promise<number> {
  const row = await liveAgents(db)
    .select((eb) => eb.fn.countAll<number | string>().as('count'))
    .where('org_id', '=', orgId)
    .executeTakeFirstOrThrow();
  return Number(row.count);
}

/** The non-revoked agent of an organisation with a display name, if any (names are unique per org). */
export async function findLiveAgentByOrgName(db: Db, orgId: string, displayName: string): Promise<AgentRow | undefined> {
  const row = await liveAgents(db)
    .selectAll()
    .where('org_id', '=', orgId)
    .where('display_name', '=', displayName)
    .executeTakeFirst();
  return row ? fromRow(row) : undefined;
}

/** Agents per status, and per trust-validation state: the dashboard's counts. */
export async function countAgentsBy(db: Db, column: 'status' | 'trust_state'): Promise<Record<string, number>> {
  const rows = await db
    .selectFrom('agents')
    .select([column, (eb) => eb.fn.countAll<number | string>().as('count')])
    .groupBy(column)
    .execute();
  return Object.fromEntries(rows.map((row) => [row[column] as string, Number(row.count)]));
}

/** How many endpoints the active agents declare between them. */
export async function countActiveEndpoints(db: Db): Promise<number> {
  const row = await db
    .selectFrom('agents')
    .select((eb) => eb.fn.sum<number | string | null>('endpoint_count').as('total'))
    .where('status', '=', 'active')
    .executeTakeFirstOrThrow();
  return Number(row.total ?? 0);
}

/** Non-revoked agents whose trust evidence lapses before `before`, soonest first. */
export async function listTrustExpiring(db: Db, before: string, limit: number): Promise<AgentRow[]> {
  const rows = await liveAgents(db)
    .selectAll()
    .where('trust_expires_at', 'is not', null)
    .where('trust_expires_at', '<', before)
    .orderBy('trust_expires_at', 'asc')
    .limit(limit)
    .execute();
  return rows.map(fromRow);
}
