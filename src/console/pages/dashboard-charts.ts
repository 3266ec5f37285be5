/**
 * The dashboard's charts over the range a person picks (last hour, day or week: `?range=`): requests
 * this registry instance answered, and endpoint health. Both come from `GET /v1/admin/overview`, which
 * keeps requests per minute for the last hour (in memory, per instance) and replays endpoint health
 * hour by hour over the last day: a longer range shows the part not kept as such rather than as zero.
 */
import type { Static } from 'typebox';
import type { OverviewSchema } from '../../contract/schemas/operations-schemas.ts';
import { html, type View } from '../views/html.ts';
import { TimeChart, type ChartBucket, type ChartRange } from '../views/time-chart.ts';

type Overview = Static<typeof OverviewSchema>;

export const CHART_RANGES = ['hour', 'day', 'week'] as const;
export type ChartRangeName = (typeof CHART_RANGES)[number];

const MINUTE_MS = 60_000;
const HOUR_MS = 60 * MINUTE_MS;
const DAY_MS = 24 * HOUR_MS;
const RANGE_LABEL: Record<ChartRangeName, string> = { hour: 'Last hour', day: 'Last day', week: 'Last week' };
const WEEKDAY = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'];

const hhmm = (at: Date) => at.toISOString().slice(11, 16);
const dayLabel = (at: Date) => `${WEEKDAY[at.getUTCDay()]} ${at.getUTCDate()}`;

/** The range asked for, `hour` by default. */
export function chartRangeOf(value: string | undefined): ChartRangeName {
  return (CHART_RANGES as readonly string[]).includes(value ?? '') ? (value as ChartRangeName) : 'hour';
}

function rangeOf(name: ChartRangeName, now: number): ChartRange {
  const row = (bucket: ChartBucket) => {
    const start = new Date(bucket.start);
    const end = new Date(bucket.end);
    return `${name === 'week' ? `${dayLabel(start)} ` : ''}${hhmm(start)}–${hhmm(end)}`;
  };
  if (name === 'hour') return { from: now - HOUR_MS, to: now, tickMs: 10 * MINUTE_MS, tick: hhmm, row };
  if (name === 'day') return { from: now - DAY_MS, to: now, tickMs: 4 * HOUR_MS, tick: hhmm, row };
  return { from: now - 7 * DAY_MS, to: now, tickMs: DAY_MS, tick: dayLabel, row };
}

/** Requests per minute, added up per hour on the longer ranges (a minute's bar would be thinner than a pixel). */
function trafficBuckets(minutes: Overview['traffic']['minutes'], range: ChartRangeName): ChartBucket[] {
  const size = range === 'hour' ? MINUTE_MS : HOUR_MS;
  const buckets = new Map<number, number[]>();
  for (const minute of minutes) {
    const start = Math.floor(Date.parse(minute.at) / size) * size;
    const values = buckets.get(start) ?? [0, 0, 0];
    values[0] = (values[0] ?? 0) + minute.requests - minute.client_errors - minute.server_errors;
    values[1] = (values[1] ?? 0) + minute.client_errors;
    values[2] = (values[2] ?? 0) + minute.server_errors;
    buckets.set(start, values);
  }
  return [...buckets].map(([start, values]) => ({ start, end: start + size, values }));
}

/** Health is sampled each hour: a sample stands for the hour that ends with it. */
function healthBuckets(history: Overview['health_history']): ChartBucket[] {
  return history.map((point) => {
    const end = Date.parse(point.at);
    return { start: end - HOUR_MS, end, values: [point.healthy, point.down, point.unknown] };
  });
}

/** The range choice: links, so it works without script and the live refresh keeps it (the page URL carries it). */
function RangeChoice({ current }: { current: ChartRangeName }): View {
  return html`<nav class="range-choice" aria-label="Chart time range"><ul>
    ${CHART_RANGES.map((name) => html`<li><a href=${`/dashboard?range=${name}`} aria-current=${name === current ? 'true' : undefined}>${RANGE_LABEL[name]}</a></li>`)}
  </ul></nav>`;
}

/** Both charts over `range`, with the range choice. */
export function DashboardCharts({ overview, range, now }: { overview: Overview; range: ChartRangeName; now: number }): View {
  const chartRange = rangeOf(range, now);
  const minutes = overview.traffic.minutes;
  const traffic = trafficBuckets(minutes, range);
  const health = healthBuckets(overview.health_history);
  const firstMinute = minutes[0] ? Date.parse(minutes[0].at) : now;
  const firstSample = health[0]?.start ?? now;
  const requests = minutes.reduce((sum, minute) => sum + minute.requests, 0);
  const probed = overview.health_history.some((point) => point.healthy + point.down > 0);
  return html`
    <${RangeChoice} current=${range} />
    <div class="cols">
      <${TimeChart} id="traffic-chart" title=${`Requests answered, ${RANGE_LABEL[range].toLowerCase()}, per ${range === 'hour' ? 'minute' : 'hour'}`} unit="requests"
        range=${chartRange} buckets=${traffic} keptSince=${firstMinute}
        series=${[{ name: '2xx/3xx', className: 'fill-ok' }, { name: '4xx', className: 'fill-warn' }, { name: '5xx', className: 'fill-bad' }]}
        notKept="this registry instance counts requests in memory for the last hour only (a restart starts afresh); longer histories come from its Prometheus metrics at /metrics."
        empty=${requests === 0 && 'Every request this registry instance answers is counted here by the minute, 4xx and 5xx apart; there have been none in the last hour.'} />
      <${TimeChart} id="health-chart" title=${`Endpoint health, ${RANGE_LABEL[range].toLowerCase()}, sampled each hour`} unit="endpoints"
        range=${chartRange} buckets=${health} keptSince=${firstSample}
        series=${[{ name: 'healthy', className: 'fill-ok' }, { name: 'down', className: 'fill-bad' }, { name: 'not probed', className: 'fill-neutral' }]}
        notKept="the registry replays endpoint health over the last day only."
        empty=${!probed && (overview.endpoints.total === 0
          ? 'No active agent has an endpoint yet. Register an agent (Agents, or POST /v1/agents) and its endpoints are counted here each hour.'
          : "No endpoint has been probed yet: the registry's health prober (REGISTRY_HEALTH_PROBES) checks each active agent's health_url and its answers fill this chart; endpoints without one stay grey, not probed.")} />
    </div>`;
}
