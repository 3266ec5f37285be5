import type { RegistryClient } from '../../client/registry-client.ts';
import { collectAlerts, type AlertReport } from './alert-rules.ts';

/**
 * The alert report as pages ask for it. Every rule costs registry calls (a dozen or so, with a ledger
 * check), and one registry change refreshes every open dashboard and alerts page at the same moment:
 * the requests of one credential that arrive while a report is being made share it. Nothing is kept
 * after it is made, so no page ever shows alerts older than the change that refreshed it.
 */
const running = new Map<string, Promise<AlertReport>>();

export function currentAlerts(registry: RegistryClient): Promise<AlertReport> {
  const shared = running.get(registry.identity);
  if (shared) return shared;
  const report = collectAlerts(registry).finally(() => running.delete(registry.identity));
  running.set(registry.identity, report);
  return report;
}
