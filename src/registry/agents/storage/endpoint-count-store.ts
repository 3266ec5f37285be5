import type { Kysely } from 'kysely';
import type { Database } from '../../storage/schema.ts';

type Db = Kysely<Database>;

/**
 * Every endpoint of the agents the filter selects (all statuses), summed from each agent's
 * `endpoint_count`: the exact `total` of a FHIR Endpoint search without per-endpoint checks.
 */
export async function countEndpoints(db: Db, filter: { orgId?: string; id?: string }): Promise<number> {
  let query = db.selectFrom('agents').select((eb) => eb.fn.sum<number | string | null>('endpoint_count').as('total'));
  if (filter.orgId !== undefined) query = query.where('org_id', '=', filter.orgId);
  if (filter.id !== undefined) query = query.where('id', '=', filter.id);
  const row = await query.executeTakeFirstOrThrow();
  return Number(row.total ?? 0);
}
