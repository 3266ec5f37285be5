/** The UTC calendar day the daily quota and usage counts are kept per (contract §7: "UTC day"). */

const DAY_MS = 86_400_000;

/** `YYYY-MM-DD` of the UTC day containing `ms`. */
export function utcDay(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}

/** The instant the UTC day after the one containing `ms` starts (when daily quotas reset). */
export function nextUtcMidnight(ms: number): number {
  return (Math.floor(ms / DAY_MS) + 1) * DAY_MS;
}
