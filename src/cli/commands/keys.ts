import { parseArgs } from 'node:util';
import { SCOPES, systemContext, type Scope } from '../../core/call-context.ts';
import { systemClock } from '../../core/clock.ts';
import { loadConfig } from '../../core/config.ts';
import { openStorage, storageOptionsFromConfig } from '../../registry/storage/database.ts';
import { migrateToLatest } from '../../registry/storage/migrator.ts';
import { PRICING_TIER_NAMES, type PricingTier } from '../../core/pricing-tiers.ts';
import { createApiKeyService } from '../../registry/credentials/api-key-service.ts';
import { UsageError, type WardCommand } from '../command.ts';

const USAGE = `Usage: ward keys create --org <org_id> [--name <display name>] [--tier ${PRICING_TIER_NAMES.join('|')}] [--scopes registry:read,registry:admin] [--expires <RFC 3339>]

Creates an API key directly in the configured storage (no running registry needed) and prints it
once as JSON; use it to make the first admin key.

Example:
  npx ward keys create --org nhs-ops --tier business --scopes registry:read,registry:admin`;

/** `ward keys create`: the offline way to the first admin key (contract §7). */
export const keysCommand: WardCommand = {
  name: 'keys',
  usage: USAGE,
  async run(args) {
    const { positionals, values } = parseArgs({
      args,
      allowPositionals: true,
      options: { org: { type: 'string' }, name: { type: 'string' }, tier: { type: 'string' }, scopes: { type: 'string' }, expires: { type: 'string' } },
    });
    if (positionals[0] !== 'create' || !values.org) throw new UsageError();
    const tier = (values.tier ?? 'developer') as PricingTier;
    const scopes = (values.scopes ?? 'registry:read').split(',').map((s) => s.trim()) as Scope[];
    const unknown = [...scopes.filter((s) => !(SCOPES as readonly string[]).includes(s)), ...(PRICING_TIER_NAMES.includes(tier) ? [] : [tier])];
    if (unknown.length > 0) throw new UsageError(`unknown ${unknown.join(', ')}`);
    const config = loadConfig();
    const storage = await openStorage(storageOptionsFromConfig(config));
    try {
      await migrateToLatest(storage);
      const keys = await createApiKeyService({ storage, clock: systemClock, ...(config.REGISTRY_API_KEY_SECRET ? { secret: config.REGISTRY_API_KEY_SECRET } : {}) });
      const created = await keys.createOnce({ ctx: systemContext(systemClock, 'ward-keys-create') }, {
        org_id: values.org as string,
        display_name: values.name ?? `${values.org} key`,
        tier,
        scopes,
        ...(values.expires ? { expires_at: values.expires } : {}),
      });
      console.log(JSON.stringify(created.body, null, 2));
      return 0;
    } finally {
      await storage.close();
    }
  },
};
