/**
 * The console's alerts (docs/console.md, "Alert rules"): conditions derived from what the registry
 * already knows, read through its API each time a page asks, so an alert is open exactly while its
 * condition holds and nothing has to be acknowledged or stored. Each says when it started and links
 * to what it concerns.
 */
import { decodeJwt } from 'jose';
import type { RegistryAnswer, RegistryClient } from '../../client/registry-client.ts';
import { toHex } from '../../core/crypto/merkle.ts';
import { auditLedger } from '../../client/ledger-audit.ts';
import type { Failure } from '../pages/page-kit.ts';

export type AlertSeverity = 'critical' | 'warning' | 'info';

export type Alert = {
  /** Stable for one condition on one thing, e.g. `endpoint_down:registry://gb/agents/01…#0`. */
  id: string;
  rule: AlertRule;
  severity: AlertSeverity;
  title: string;
  detail: string;
  /** When the condition began, as far as the registry's data tells; null when it does not. */
  since: string | null;
  /** The console page of what it concerns. */
  href: string;
};

export const ALERT_RULES = {
  endpoint_down: 'An active agent’s endpoint failed its health probe (critical).',
  endpoint_flapping: `An endpoint changed health 3 or more times in the last hour (warning).`,
  trust_expiring: 'An agent’s trust evidence expires within 30 days (warning), or has expired (critical).',
  delegation_expiring: 'This registry’s delegation statement from its parent has expired (critical) or has less than a fifth of its life left (warning): the refresh from the parent is failing.',
  child_revoked: 'A child registry of this one is revoked (info): federated discovery no longer asks it.',
  key_quota: 'An active API key has used 90 % or more of its daily request quota (warning; critical at 100 %).',
  ledger_unverified: 'The transparency ledger’s signed tree head does not verify, or does not extend the last one this console verified (critical).',
} as const;

export type AlertRule = keyof typeof ALERT_RULES;

const SEVERITY_ORDER: Record<AlertSeverity, number> = { critical: 0, warning: 1, info: 2 };
const DAY_MS = 86_400_000;
const QUOTA_WARNING = 0.9;

const ulidOf = (uri: string) => uri.slice(uri.lastIndexOf('/') + 1);

/**
 * The largest tree head each registry's ledger was verified at, and when a failure was first seen:
 * what makes "does not extend the last one" checkable. Kept as the size and root this console
 * verified while the head was current (plus when it was signed and by which key, to show), not as the
 * signed document: the key that signed it may since have been rotated away, even withdrawn at once,
 * and that does not undo what was verified then. Process memory; a restart starts over.
 */
type RememberedLedgerHead = { treeSize: number; rootHash: string; timestamp: string; kid: string | undefined };
const ledgerMemory = new Map<string, { head?: RememberedLedgerHead; failingSince?: string }>();

/** An endpoint of an agent, as the overview names it. */
type EndpointOfAgent = { agent_id: string; endpoint_index: number; display_name: string | null };

/** An alert about one endpoint of an agent: its id, title and link follow from the endpoint. */
function endpointAlert(endpoint: EndpointOfAgent, rule: AlertRule, severity: AlertSeverity, what: string, detail: string, since: string): Alert {
  return {
    id: `${rule}:${endpoint.agent_id}#${endpoint.endpoint_index}`,
    rule,
    severity,
    title: `${endpoint.display_name ?? endpoint.agent_id}: ${what}`,
    detail,
    since,
    href: `/agents/${ulidOf(endpoint.agent_id)}`,
  };
}

/** What was found; `failures` are the registry answers that kept the `unchecked` rules from running. */
export type AlertReport = { alerts: Alert[]; failures: Failure[]; unchecked: AlertRule[]; checkedAt: string };

/** API keys read for the quota rule: at most this many pages of 100 (the rest are reported unchecked). */
const KEY_PAGES = 10;

export async function collectAlerts(registry: RegistryClient, now: Date = new Date()): Promise<AlertReport> {
  const [overview, revoked, metadata, keys, tiers, usage] = await Promise.all([
    registry.overview(),
    registry.listRegistries({ status: 'revoked', limit: 100 }),
    registry.metadata(),
    allApiKeys(registry),
    registry.tiers(),
    registry.usage({ since: new Date(Math.floor(now.getTime() / DAY_MS) * DAY_MS).toISOString(), until: now.toISOString() }),
  ]);
  const alerts: Alert[] = [];
  const failures: Failure[] = [];
  const unchecked = new Set<AlertRule>();
  const note = (answer: RegistryAnswer, rules: AlertRule[]) => {
    if (answer.ok) return;
    failures.push(answer);
    for (const rule of rules) unchecked.add(rule);
  };
  note(overview, ['endpoint_down', 'endpoint_flapping', 'trust_expiring']);
  note(revoked, ['child_revoked']);
  note(metadata, ['delegation_expiring']);
  for (const answer of [keys, tiers, usage]) note(answer, ['key_quota']);

  if (overview.ok) {
    const o = overview.body;
    for (const endpoint of o.endpoints_down) {
      const detail = `${endpoint.url} failed its health probe${endpoint.reason ? `: ${endpoint.reason}` : ''}.`;
      alerts.push(endpointAlert(endpoint, 'endpoint_down', 'critical', 'endpoint down', detail, endpoint.down_since ?? endpoint.checked_at));
    }
    const hourAgo = new Date(now.getTime() - 3_600_000).toISOString();
    for (const endpoint of o.endpoints_flapping) {
      const detail = `${endpoint.url} changed health ${endpoint.changes_last_hour} times in the last hour.`;
      alerts.push(endpointAlert(endpoint, 'endpoint_flapping', 'warning', 'endpoint flapping', detail, hourAgo));
    }
    for (const agent of o.trust_expiring) {
      const expired = Date.parse(agent.expires_at) <= now.getTime();
      alerts.push({
        id: `trust_expiring:${agent.agent_id}`,
        rule: 'trust_expiring',
        severity: expired ? 'critical' : 'warning',
        title: `${agent.display_name}: trust evidence ${expired ? 'expired' : 'expiring'}`,
        detail: `Its trust material ${expired ? 'expired' : 'expires'} at ${agent.expires_at}.`,
        since: expired ? agent.expires_at : new Date(Date.parse(agent.expires_at) - 30 * DAY_MS).toISOString(),
        href: `/agents/${ulidOf(agent.agent_id)}`,
      });
    }
  }

  if (revoked.ok) {
    for (const child of revoked.body.registries) {
      alerts.push({
        id: `child_revoked:${child.registry_id}`,
        rule: 'child_revoked',
        severity: 'info',
        title: `Child registry ${child.display_name} is revoked`,
        detail: child.revocation_reason ? `Reason: ${child.revocation_reason}` : 'No reason was given.',
        since: child.revoked_at,
        href: '/federation',
      });
    }
  }

  if (metadata.ok) {
    const before = failures.length;
    alerts.push(...(await delegationAlerts(registry, String(metadata.body.registry_id), String(metadata.body.tier), now, failures)));
    if (failures.length > before) unchecked.add('delegation_expiring');
  }

  if (keys.ok && tiers.ok && usage.ok) {
    const daily = new Map(tiers.body.tiers.map((tier) => [tier.name, tier.requests_per_day]));
    const used = new Map(usage.body.keys.map((key) => [key.key_id, key.totals.general]));
    if (keys.body.truncated) unchecked.add('key_quota');
    for (const key of keys.body.api_keys) {
      if (!key.active) continue;
      // An override of null means unlimited, like a tier's null; no override means the tier's figure.
      const limits = key.limits as { requests_per_day?: number | null } | null;
      const limit = limits && 'requests_per_day' in limits ? (limits.requests_per_day ?? null) : (daily.get(key.tier) ?? null);
      const count = used.get(key.key_id) ?? 0;
      if (!limit || count < limit * QUOTA_WARNING) continue;
      alerts.push({
        id: `key_quota:${key.key_id}`,
        rule: 'key_quota',
        severity: count >= limit ? 'critical' : 'warning',
        title: `Key ${key.display_name} at ${Math.floor((count / limit) * 100)} % of its daily quota`,
        detail: `${count} of ${limit} requests today (UTC) for ${key.org_id}, tier ${key.tier}.`,
        since: null,
        href: '/settings#api-keys',
      });
    }
  }

  const ledger = await ledgerAlert(registry, now);
  if (ledger === 'unchecked') unchecked.add('ledger_unverified');
  else if (ledger) alerts.push(ledger);

  // Most severe first; within a severity the oldest first, and those without a known start last.
  alerts.sort((a, b) => SEVERITY_ORDER[a.severity] - SEVERITY_ORDER[b.severity] || (a.since === null ? 1 : 0) - (b.since === null ? 1 : 0) || (a.since ?? '').localeCompare(b.since ?? ''));
  return { alerts, failures, unchecked: [...unchecked], checkedAt: now.toISOString() };
}

type KeyList = Extract<Awaited<ReturnType<RegistryClient['listApiKeys']>>, { ok: true }>['body']['api_keys'];

/** Every API key, page by page, up to {@link KEY_PAGES} pages; `truncated` when there were more. */
async function allApiKeys(registry: RegistryClient): Promise<RegistryAnswer<{ api_keys: KeyList; truncated: boolean }>> {
  const keys: KeyList = [];
  let cursor: string | undefined;
  for (let page = 0; page < KEY_PAGES; page += 1) {
    const answer = await registry.listApiKeys({ limit: 100, ...(cursor ? { cursor } : {}) });
    if (!answer.ok) return answer;
    keys.push(...answer.body.api_keys);
    cursor = answer.body.next_cursor ?? undefined;
    if (!cursor) return { ...answer, body: { api_keys: keys, truncated: false } };
  }
  const last = await registry.listApiKeys({ limit: 1, cursor });
  return last.ok ? { ...last, body: { api_keys: keys, truncated: last.body.api_keys.length > 0 } } : last;
}

/** This registry's own place in the chain: each statement above it, read from its own trust bundle. */
async function delegationAlerts(registry: RegistryClient, registryId: string, tier: string, now: Date, failures: Failure[]): Promise<Alert[]> {
  if (tier === 'root') return [];
  const bundle = await registry.trustBundle(registryId);
  if (!bundle.ok) {
    // A child that has not been registered with a parent yet has no chain: nothing to alert on.
    if (bundle.status !== 404 && bundle.status !== 403) failures.push(bundle);
    return [];
  }
  const alerts: Alert[] = [];
  bundle.body.statements.forEach((statement, index) => {
    let claims: { iat?: number; exp?: number; iss?: string; sub?: string };
    try {
      claims = decodeJwt(statement);
    } catch {
      return;
    }
    if (typeof claims.exp !== 'number' || typeof claims.iat !== 'number') return;
    const left = claims.exp * 1000 - now.getTime();
    const life = (claims.exp - claims.iat) * 1000;
    if (left > life / 5) return;
    alerts.push({
      id: `delegation_expiring:${claims.iss ?? index}->${claims.sub ?? ''}`,
      rule: 'delegation_expiring',
      severity: left <= 0 ? 'critical' : 'warning',
      title: `Delegation statement ${left <= 0 ? 'expired' : 'near expiry'}: ${claims.iss ?? '?'} → ${claims.sub ?? '?'}`,
      detail: `It ${left <= 0 ? 'expired' : 'expires'} at ${new Date(claims.exp * 1000).toISOString()}; the refresh from the parent should have replaced it by now.`,
      since: new Date(claims.exp * 1000 - life / 5).toISOString(),
      href: '/federation',
    });
  });
  return alerts;
}

async function ledgerAlert(registry: RegistryClient, now: Date): Promise<Alert | 'unchecked' | undefined> {
  const url = registry.baseUrl;
  const memory = ledgerMemory.get(url) ?? {};
  const report = await auditLedger({ registry, previousVerified: memory.head });
  const unreachable = report.checks.some((check) => check.name === 'registry');
  // Other checks may have finished meanwhile: the memory is read again, and a head never replaces a larger one.
  const latest = ledgerMemory.get(url) ?? {};
  if (report.ok && report.verified) {
    const { treeSize, rootHash, timestamp, kid } = report.verified;
    const head = latest.head && latest.head.treeSize > treeSize ? latest.head : { treeSize, rootHash: toHex(rootHash), timestamp, kid };
    ledgerMemory.set(url, { head });
    return undefined;
  }
  if (unreachable) return 'unchecked'; // the registry did not answer: not a broken ledger
  const failingSince = latest.failingSince ?? now.toISOString();
  ledgerMemory.set(url, { ...latest, failingSince });
  const failedCheck = report.checks.find((check) => !check.ok);
  return {
    id: 'ledger_unverified',
    rule: 'ledger_unverified',
    severity: 'critical',
    title: 'The transparency ledger does not verify',
    detail: failedCheck ? `${failedCheck.name}: ${failedCheck.detail}` : 'A check failed.',
    since: failingSince,
    href: '/audit',
  };
}
