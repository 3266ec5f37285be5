import type { Kysely } from 'kysely';

/**
 * What instances of a cluster need to know of each other (docs/operations.md, "Several instances"):
 * - each idempotency claim names the registry instance holding it (`holder`, its heartbeat id) and
 *   carries a random `claim_token`. Another instance may take over a claim once its holder's
 *   heartbeat has lapsed (seconds, not the 60 s lock), and the holder's answer is stored only while
 *   the token is still its own, so a taken-over request can never commit as well;
 * - each heartbeat lease says what runs there (`detail`, JSON: Ward's version and the migrations its
 *   build knows), so `ward migrate` can refuse a contracting step while an older build still runs.
 * Expand: older instances write none of these columns and keep working.
 */
export const phase = 'expand';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('idempotency_keys').addColumn('holder', 'text').execute();
  await db.schema.alterTable('idempotency_keys').addColumn('claim_token', 'text').execute();
  await db.schema.alterTable('leases').addColumn('detail', 'text').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('leases').dropColumn('detail').execute();
  await db.schema.alterTable('idempotency_keys').dropColumn('claim_token').execute();
  await db.schema.alterTable('idempotency_keys').dropColumn('holder').execute();
}
