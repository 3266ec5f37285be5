/**
 * Endpoint health over time, replayed backwards from the readings of now through the
 * `agent.health_changed` events: the state at an earlier instant is the current one with every later
 * change undone. Pure; it sees only health changes, so an endpoint added or removed by a registration
 * or an update in the window shifts the earlier points by one (docs/console.md says so).
 */
export type HealthChange = { occurred_at: string; subject: string; endpoint_index: number; url: string; from: string; to: string };

export type HealthCounts = { healthy: number; down: number; unknown: number };

export type HealthPoint = HealthCounts & { at: string };

type HealthClass = keyof HealthCounts;

function classOf(status: string): HealthClass {
  if (status === 'healthy') return 'healthy';
  if (status === 'unhealthy') return 'down';
  return 'unknown';
}

/**
 * Counts at `points` evenly spaced instants ending at `now`, `stepMs` apart, oldest first.
 * `changes` may come in any order; those after `now` are ignored.
 */
export function replayHealthHistory(current: HealthCounts, changes: readonly HealthChange[], now: Date, stepMs: number, points: number): HealthPoint[] {
  const newestFirst = changes
    .map((change) => ({ change, at: Date.parse(change.occurred_at) }))
    .filter((entry) => entry.at <= now.getTime())
    .sort((a, b) => b.at - a.at);
  const counts = { ...current };
  const series: HealthPoint[] = [];
  let next = 0;
  for (let index = 0; index < points; index += 1) {
    const instant = now.getTime() - index * stepMs;
    // Undo every change that happened after this instant.
    while (next < newestFirst.length && (newestFirst[next] as { at: number }).at > instant) {
      const { change } = newestFirst[next] as { change: HealthChange };
      counts[classOf(change.to)] -= 1;
      counts[classOf(change.from)] += 1;
      next += 1;
    }
    series.push({ at: new Date(instant).toISOString(), healthy: Math.max(0, counts.healthy), down: Math.max(0, counts.down), unknown: Math.max(0, counts.unknown) });
  }
  return series.reverse();
}

/** Endpoints whose health changed at least `threshold` times among `changes`: flapping. */
export function flappingEndpoints(changes: readonly HealthChange[], threshold: number) {
  const byEndpoint = new Map<string, { subject: string; endpoint_index: number; url: string; changes: number; last_change_at: string }>();
  for (const change of changes) {
    const key = `${change.subject}#${change.endpoint_index}`;
    const entry = byEndpoint.get(key) ?? { subject: change.subject, endpoint_index: change.endpoint_index, url: change.url, changes: 0, last_change_at: change.occurred_at };
    entry.changes += 1;
    if (change.occurred_at > entry.last_change_at) entry.last_change_at = change.occurred_at;
    byEndpoint.set(key, entry);
  }
  return [...byEndpoint.values()].filter((entry) => entry.changes >= threshold).sort((a, b) => b.changes - a.changes);
}
