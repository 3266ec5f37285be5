import { sql, type Kysely } from 'kysely';
import { confusableSkeleton } from '../../../core/names/confusable-skeleton.ts';

/** Rows read and written per statement: two parameters a row, far below either database's limit. */
const CHUNK = 500;

/**
 * One live agent per organisation and name, now compared by what the name looks like (issue 48): the
 * UTS #39 confusable skeleton of `display_name` (src/core/names/confusable-skeleton.ts) gets a column,
 * `name_skeleton`, and a unique index over the live (not revoked) agents of each organisation, so
 * `NНS Тriage` (Cyrillic) cannot be registered beside `NHS Triage`, as `NHS Triage` cannot twice
 * (migration 010's index, which stays).
 *
 * The backfill computes every row's skeleton in the process (the table is Unicode's, not SQL's),
 * page by page in id order. Live agents of one organisation that already look alike keep their names:
 * the oldest holds the skeleton, the others keep NULL (no migration fails on data it did not write),
 * and get theirs at a later write that changes the name to one nobody else's looks like
 * (agent-writes.ts).
 *
 * An expanding step: an older build ignores the column, and its rows (NULL) are never refused by the
 * index; migration 010's exact-name index still holds for them. The new build computes a skeleton for
 * such a row at its next write.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('agents').addColumn('name_skeleton', 'text').execute();
  let after = '';
  for (;;) {
    const page = (await sql<{ id: string; display_name: string }>`select id, display_name from agents where id > ${after} order by id limit ${CHUNK}`.execute(db)).rows;
    const last = page.at(-1);
    if (!last) break;
    const values = sql.join(page.map((row) => sql`(${row.id}, ${confusableSkeleton(row.display_name)})`));
    await sql`with skeletons (id, skeleton) as (values ${values})
              update agents set name_skeleton = (select skeleton from skeletons where skeletons.id = agents.id)
              where id in (select id from skeletons)`.execute(db);
    after = last.id;
  }
  // Look-alikes already live in one organisation: all but the oldest give their skeleton up.
  await sql`create index agents_org_skeleton_backfill on agents (org_id, name_skeleton)`.execute(db);
  await sql`update agents set name_skeleton = null
            where status <> 'revoked' and org_id is not null
              and exists (select 1 from agents earlier
                          where earlier.org_id = agents.org_id and earlier.name_skeleton = agents.name_skeleton
                            and earlier.status <> 'revoked' and earlier.id < agents.id)`.execute(db);
  await sql`drop index agents_org_skeleton_backfill`.execute(db);
  await sql`create unique index agents_org_skeleton_live on agents (org_id, name_skeleton) where status <> 'revoked'`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop index agents_org_skeleton_live`.execute(db);
  await db.schema.alterTable('agents').dropColumn('name_skeleton').execute();
}
