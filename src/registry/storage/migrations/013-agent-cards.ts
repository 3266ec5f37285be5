import type { Kysely } from 'kysely';
import { createTable } from './create-table.ts';

/**
 * The agents registered from an A2A agent card (`POST /v1/agents/from-card`): where the card is, the
 * digest of what its last accepted reading maps to, and the last re-read's outcome (docs/mesh.md,
 * "Signed cards"). One row per agent; an agent registered by `POST /v1/agents` has none.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await createTable(db, 'agent_cards', {
    agent_id: 'text primary key',
    card_url: 'text not null',
    content_digest: 'text not null',
    signed_by: 'text',
    read_at: 'text not null',
    last_error: 'text',
  });
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('agent_cards').execute();
}
