import type { Kysely } from 'kysely';
import type { Database } from '../../storage/schema.ts';

/**
 * The owners of agents (each distinct `org_id`), read from the agents themselves: the registry keeps
 * no organisation table, an organisation is what its agents' records say it is (docs/fhir.md).
 */
export type OwnerRow = { org_id: string; newest_agent_id: string };

type Db = Kysely<Database>;

/** A page of owners in `org_id` order after `afterOrgId`, each with its newest agent (greatest ULID). */
export async function listOwnerPage(db: Db, filter: { orgId?: string }, page: { afterOrgId?: string; limit: number }): Promise<OwnerRow[]> {
  let query = db
    .selectFrom('agents')
    .select((eb) => ['org_id', eb.fn.max('id').as('newest_agent_id')])
    .where('org_id', 'is not', null);
  if (filter.orgId !== undefined) query = query.where('org_id', '=', filter.orgId);
  if (page.afterOrgId !== undefined) query = query.where('org_id', '>', page.afterOrgId);
  const rows = await query.groupBy('org_id').orderBy('org_id', 'asc').limit(page.limit).execute();
  return rows.map((row) => ({ org_id: row.org_id as string, newest_agent_id: String(row.newest_agent_id) }));
}

export async function countOwners(db: Db, filter: { orgId?: string }): Promise<number> {
  let query = db
    .selectFrom('agents')
    .select((eb) => eb.fn.count<number | string>('org_id').distinct().as('count'))
    .where('org_id', 'is not', null);
  if (filter.orgId !== undefined) query = query.where('org_id', '=', filter.orgId);
  const row = await query.executeTakeFirstOrThrow();
  return Number(row.count);
}
