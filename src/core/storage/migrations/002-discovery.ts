import type { Kysely } from 'kysely';

/**
 * Discovery and health: the skill index, the ranking columns discovery orders by, endpoint health
 * readings, and leases (so that one instance of several runs the health prober).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  // Ranking columns kept beside the document so discovery can filter and order in SQL.
  await db.schema.alterTable('agents').addColumn('token_binding', 'text', (c) => c.notNull().defaultTo('none')).execute();
  await db.schema.alterTable('agents').addColumn('best_priority', 'integer', (c) => c.notNull().defaultTo(100)).execute();
  // 2 healthy, 1 unknown, 0 unhealthy: the best reading among the agent's endpoints.
  await db.schema.alterTable('agents').addColumn('health_rank', 'integer', (c) => c.notNull().defaultTo(1)).execute();

  await db.schema
    .createTable('agent_skills')
    .addColumn('skill', 'text', (c) => c.notNull())
    .addColumn('agent_id', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('agent_skills_pk', ['skill', 'agent_id'])
    .execute();
  await db.schema.createIndex('agent_skills_agent').on('agent_skills').column('agent_id').execute();
  // Covers everything discovery filters and ranks on, so ranking never reads the wide rows with their
  // JSON documents (measured at 100 000 agents: 2.2 ms → 1.0 ms for a skill held by 1 000 agents).
  await db.schema
    .createIndex('agents_rank')
    .on('agents')
    .columns(['id', 'status', 'trust_state', 'trust_level', 'health_rank', 'jurisdiction', 'best_priority', 'created_at', 'token_binding'])
    .execute();
  // Deliberately no (status, trust_state) index on agents: with one, SQLite's planner starts from it
  // and walks every active agent instead of starting from the skill (measured: 2.3 ms vs 0.3 ms at
  // 10 000 agents). Discovery goes skill index → agent primary key.

  await db.schema
    .createTable('endpoint_health')
    .addColumn('agent_id', 'text', (c) => c.notNull())
    .addColumn('endpoint_index', 'integer', (c) => c.notNull())
    .addColumn('url', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('reason', 'text')
    .addColumn('latency_ms', 'integer')
    .addColumn('checked_at', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('endpoint_health_pk', ['agent_id', 'endpoint_index'])
    .execute();

  await db.schema
    .createTable('leases')
    .addColumn('name', 'text', (c) => c.primaryKey())
    .addColumn('holder', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'text', (c) => c.notNull())
    .execute();
}
