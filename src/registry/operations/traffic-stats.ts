/**
 * Requests this instance answered, per minute, by status class: what the console's dashboard charts
 * as request and error rates. Kept in memory for the last `windowMinutes` only: a restart starts it
 * afresh, and each instance counts its own (docs/console.md). No Fastify here; app.ts feeds it.
 */
export type TrafficMinute = { at: string; requests: number; client_errors: number; server_errors: number };

export type TrafficStats = {
  /** Counts one answered request. */
  record(statusCode: number): void;
  /** One entry per minute of the window, oldest first, the current (partial) minute last. */
  minutes(): TrafficMinute[];
};

const MINUTE_MS = 60_000;

export function createTrafficStats(options: { now: () => number; windowMinutes?: number }): TrafficStats {
  const window = options.windowMinutes ?? 60;
  // Ring of per-minute counters, indexed by minute number modulo the window.
  const slots = Array.from({ length: window }, () => ({ minute: -1, requests: 0, client: 0, server: 0 }));

  const slotFor = (minute: number) => {
    const slot = slots[minute % window] as (typeof slots)[number];
    if (slot.minute !== minute) Object.assign(slot, { minute, requests: 0, client: 0, server: 0 });
    return slot;
  };

  return {
    record(statusCode) {
      const slot = slotFor(Math.floor(options.now() / MINUTE_MS));
      slot.requests += 1;
      if (statusCode >= 500) slot.server += 1;
      else if (statusCode >= 400) slot.client += 1;
    },
    minutes() {
      const current = Math.floor(options.now() / MINUTE_MS);
      const series: TrafficMinute[] = [];
      for (let minute = current - window + 1; minute <= current; minute += 1) {
        const slot = slots[minute % window] as (typeof slots)[number];
        const live = slot.minute === minute;
        series.push({
          at: new Date(minute * MINUTE_MS).toISOString(),
          requests: live ? slot.requests : 0,
          client_errors: live ? slot.client : 0,
          server_errors: live ? slot.server : 0,
        });
      }
      return series;
    },
  };
}
