/** A source of the current time, injected so that tests can move time without sleeping. */
export type Clock = { now(): Date };

export const systemClock: Clock = { now: () => new Date() };

/** RFC 3339 UTC with milliseconds, the only timestamp format the registry writes (contract, Words). */
export function toTimestamp(date: Date): string {
  return date.toISOString();
}
