import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { sql } from 'kysely';
import { migrateToLatest } from '../../../src/registry/storage/migrator.ts';
import { listUsageCounts } from '../../../src/registry/metering/storage/usage-store.ts';
import { createUsageMeter } from '../../../src/registry/metering/usage-meter.ts';
import { BACKENDS, openTestStorage } from '../../helpers/registry.ts';

const DAY = '2030-01-15';

for (const backend of BACKENDS) {
  describe(`usage meter [${backend}]`, () => {
    test('batches counts in memory and adds them to what is stored', async (t) => {
      const storage = await openTestStorage(t, backend);
      await migrateToLatest(storage);
      const meter = createUsageMeter({ storage, flushEveryMs: 3_600_000 });
      t.after(() => meter.close());
      for (let i = 0; i < 250; i += 1)
        meter.record({ keyId: 'key_a', orgId: 'org-a', day: DAY, usageClass: 'general' });
      meter.record({ keyId: 'key_a', orgId: 'org-a', day: DAY, usageClass: 'routing' });
      assert.deepEqual(
        await listUsageCounts(storage.db, { fromDay: DAY, toDay: DAY }),
        [],
        'nothing written before a flush',
      );
      await meter.flush();
      await meter.flush(); // nothing pending: nothing added twice
      meter.record({ keyId: 'key_a', orgId: 'org-a', day: DAY, usageClass: 'general' });
      await meter.flush();
      assert.deepEqual(await listUsageCounts(storage.db, { fromDay: DAY, toDay: DAY }), [
        { key_id: 'key_a', org_id: 'org-a', day: DAY, class: 'general', count: 251 },
        { key_id: 'key_a', org_id: 'org-a', day: DAY, class: 'routing', count: 1 },
      ]);
    });

    test('a failed write keeps its counts for the next flush', async (t) => {
      const storage = await openTestStorage(t, backend);
      await migrateToLatest(storage);
      const meter = createUsageMeter({ storage, flushEveryMs: 3_600_000 });
      t.after(() => meter.close());
      meter.record({ keyId: 'key_a', orgId: 'org-a', day: DAY, usageClass: 'discovery' });
      await sql`alter table usage_counts rename to usage_counts_away`.execute(storage.db);
      await assert.rejects(meter.flush());
      meter.record({ keyId: 'key_a', orgId: 'org-a', day: DAY, usageClass: 'discovery' });
      await sql`alter table usage_counts_away rename to usage_counts`.execute(storage.db);
      await meter.flush();
      assert.deepEqual(await listUsageCounts(storage.db, { fromDay: DAY, toDay: DAY }), [
        { key_id: 'key_a', org_id: 'org-a', day: DAY, class: 'discovery', count: 2 },
      ]);
    });

    test('two meters (two instances) flushing the same rows at once both land', async (t) => {
      const storage = await openTestStorage(t, backend);
      await migrateToLatest(storage);
      const meters = [
        createUsageMeter({ storage, flushEveryMs: 3_600_000 }),
        createUsageMeter({ storage, flushEveryMs: 3_600_000 }),
      ];
      t.after(() => Promise.all(meters.map((m) => m.close())));
      for (const [i, meter] of meters.entries()) {
        for (const keyId of ['key_a', 'key_b', 'key_c'])
          for (let n = 0; n <= i; n += 1)
            meter.record({ keyId, orgId: 'org-a', day: DAY, usageClass: 'general' });
      }
      await Promise.all(meters.map((m) => m.flush()));
      const rows = await listUsageCounts(storage.db, { fromDay: DAY, toDay: DAY });
      assert.deepEqual(
        rows.map((r) => [r.key_id, r.count]),
        [
          ['key_a', 3],
          ['key_b', 3],
          ['key_c', 3],
        ],
      );
    });
  });
}
