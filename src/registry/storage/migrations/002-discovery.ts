import type { Kysely } from 'kysely';
import { createTable } from './create-table.ts';

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

  await createTable(db, 'agent_skills', {
    skill: 'text not null',
    agent_id: 'text not null',
  }, { primaryKey: ['skill', 'agent_id'] });
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

  await createTable(db, 'endpoint_health', {
    agent_id: 'text not null',
    endpoint_index: 'integer not null',
    url: 'text not null',
    status: 'text not null',
    reason: 'text',
    latency_ms: 'integer',
    checked_at: 'text not null',
  }, { primaryKey: ['agent_id', 'endpoint_index'] });

  await createTable(db, 'leases', {
    name: 'text primary key',
    holder: 'text not null',
    expires_at: 'text not null',
  });
}
