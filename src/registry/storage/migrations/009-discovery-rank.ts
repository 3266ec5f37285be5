import { sql, type Kysely } from 'kysely';
import { featuresOf, protocolsOf, tokenText } from '../../../core/agent-capabilities.ts';

/**
 * Discovery reads the top of a skill as an index range, not a sort of all its holders: each skill row
 * carries a copy of its agent's ranking columns (kept current by agent-store.ts, the only writer of
 * agents), and two partial indexes over the discoverable rows are in ranking order, one per skill and
 * one per skill and jurisdiction. Measured before: at 100 000 agents the join and sort of a skill's
 * ~1 000 holders was most of an uncached discovery answer; at 1 000 000 on PostgreSQL, ~10 000.
 * The features and protocols (space-separated, space-padded) let a filter on them narrow the skill
 * rows in SQL before any record is read. The old covering index on agents served only that sort and
 * slowed every write; it goes.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('agent_skills').addColumn('discoverable', 'integer', (c) => c.notNull().defaultTo(0)).execute();
  await db.schema.alterTable('agent_skills').addColumn('jurisdiction', 'text', (c) => c.notNull().defaultTo('')).execute();
  await db.schema.alterTable('agent_skills').addColumn('trust_level', 'integer', (c) => c.notNull().defaultTo(0)).execute();
  await db.schema.alterTable('agent_skills').addColumn('health_rank', 'integer', (c) => c.notNull().defaultTo(1)).execute();
  await db.schema.alterTable('agent_skills').addColumn('best_priority', 'integer', (c) => c.notNull().defaultTo(100)).execute();
  await db.schema.alterTable('agent_skills').addColumn('created_at', 'text', (c) => c.notNull().defaultTo('')).execute();
  await db.schema.alterTable('agent_skills').addColumn('token_binding', 'text', (c) => c.notNull().defaultTo('none')).execute();
  await db.schema.alterTable('agent_skills').addColumn('features', 'text', (c) => c.notNull().defaultTo(' ')).execute();
  await db.schema.alterTable('agent_skills').addColumn('protocols', 'text', (c) => c.notNull().defaultTo(' ')).execute();
  // UPDATE … FROM reads the same in SQLite (3.33+) and PostgreSQL.
  await sql`
    update agent_skills set
      discoverable = case when a.status = 'active' and a.trust_state = 'validated' then 1 else 0 end,
      jurisdiction = a.jurisdiction, trust_level = a.trust_level, health_rank = a.health_rank,
      best_priority = a.best_priority, created_at = a.created_at, token_binding = a.token_binding
    from agents a where a.id = agent_skills.agent_id`.execute(db);
  // Features and protocols come from the JSON document (boolean flags count as features): in pages.
  const typed = db as Kysely<{ agents: { id: string; record: string }; agent_skills: { agent_id: string; features: string; protocols: string } }>;
  for (let after = ''; ; ) {
    const page = await typed.selectFrom('agents').select(['id', 'record']).where('id', '>', after).orderBy('id').limit(1000).execute();
    for (const row of page) {
      const document = JSON.parse(row.record) as Parameters<typeof protocolsOf>[0];
      await typed
        .updateTable('agent_skills')
        .set({ features: tokenText(featuresOf(document.capabilities)), protocols: tokenText(protocolsOf(document)) })
        .where('agent_id', '=', row.id)
        .execute();
    }
    if (page.length < 1000) break;
    after = (page.at(-1) as { id: string }).id;
  }
  // The order is discovery's (contract §4, docs/discovery.md); the trailing columns let a filter on
  // them be checked in the index alone (measured at 1 000 000 agents on PostgreSQL: without features
  // and protocols in it, each candidate cost a cold heap read and routing's p99 was ~1 s; with them, 0.1 s). `discoverable = 1` is a literal so both planners match the queries.
  await sql`create index agent_skills_rank on agent_skills
    (skill, trust_level desc, health_rank desc, best_priority, created_at, agent_id, jurisdiction, token_binding, features, protocols)
    where discoverable = 1`.execute(db);
  await sql`create index agent_skills_rank_jurisdiction on agent_skills
    (skill, jurisdiction, trust_level desc, health_rank desc, best_priority, created_at, agent_id, token_binding, features, protocols)
    where discoverable = 1`.execute(db);
  await db.schema.dropIndex('agents_rank').execute();
}
