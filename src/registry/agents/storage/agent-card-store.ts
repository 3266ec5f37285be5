import type { Kysely, Selectable } from 'kysely';
import type { AgentCardsTable, Database } from '../../storage/schema.ts';

type Db = Kysely<Database>;

export type AgentCardRow = Selectable<AgentCardsTable>;

export async function insertAgentCard(db: Db, row: AgentCardRow): Promise<void> {
  await db.insertInto('agent_cards').values(row).execute();
}

export async function findAgentCard(db: Db, agentId: string): Promise<AgentCardRow | undefined> {
  return db.selectFrom('agent_cards').selectAll().where('agent_id', '=', agentId).executeTakeFirst();
}

/** The outcome of a re-read: the new digest and signer when accepted, the error when not. */
export async function recordCardReading(
  db: Db,
  agentId: string,
  reading: { read_at: string; last_error: string | null; content_digest?: string; signed_by?: string | null },
): Promise<void> {
  await db.updateTable('agent_cards').set(reading).where('agent_id', '=', agentId).execute();
}

/** Card-registered agents still worth reading (active or suspended), oldest reading first, with their status. */
export async function listCardsToReread(db: Db, limit: number): Promise<Array<AgentCardRow & { status: string }>> {
  return db
    .selectFrom('agent_cards')
    .innerJoin('agents', 'agents.id', 'agent_cards.agent_id')
    .selectAll('agent_cards')
    .select('agents.status')
    .where('agents.status', 'in', ['active', 'suspended'])
    .orderBy('agent_cards.read_at')
    .limit(limit)
    .execute();
}
