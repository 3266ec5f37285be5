/**
 * A stacked bar chart over time, drawn on the server as SVG (docs/console.md, "Charts"): a time axis
 * spanning the chosen range with UTC labels, a value axis with its unit, the part of the range the
 * source does not keep shaded and named, an empty state that says what will fill the chart, and the
 * same figures as a table for anyone who would rather read (screen readers included). No script, no
 * inline style: it fits the console's CSP and needs no build step.
 */
import { html, type View } from './html.ts';

export type ChartSeries = { name: string; className: string };

/** One bar: the interval it covers and one value per series. */
export type ChartBucket = { start: number; end: number; values: readonly number[] };

/** The time range a chart spans, with how its axis is labelled. */
export type ChartRange = { from: number; to: number; tickMs: number; tick: (at: Date) => string; row: (bucket: ChartBucket) => string };

export type TimeChartProps = {
  id: string;
  title: string;
  unit: string;
  range: ChartRange;
  series: readonly ChartSeries[];
  buckets: readonly ChartBucket[];
  /** The source keeps nothing before this (epoch ms); the part of the range before it is shaded. */
  keptSince: number;
  /** What the shaded part is, in words. */
  notKept: string;
  /** Whether the chart has nothing to show yet, and what will fill it. */
  empty: false | string;
};

const WIDTH = 480;
const HEIGHT = 200;
const LEFT = 44;
const RIGHT = 8;
const TOP = 24;
const BOTTOM = 24;
const PLOT_W = WIDTH - LEFT - RIGHT;
const PLOT_H = HEIGHT - TOP - BOTTOM;

/**
 * The smallest of 1, 2, 4, 6, 8, 10 × 10ⁿ at or above `value` (at least 2): a value axis of whole
 * numbers people can read, its middle line on a whole number too.
 */
export function niceCeiling(value: number): number {
  if (value <= 2) return 2;
  const power = 10 ** Math.floor(Math.log10(value));
  for (const step of [1, 2, 4, 6, 8, 10]) if (step * power >= value) return step * power;
  return 10 * power;
}

export function TimeChart(props: TimeChartProps): View {
  const { id, title, unit, range, series, buckets, keptSince, notKept, empty } = props;
  const span = range.to - range.from;
  const x = (at: number) => LEFT + (Math.min(Math.max(at, range.from), range.to) - range.from) / span * PLOT_W;
  const visible = buckets.filter((bucket) => bucket.end > range.from && bucket.start < range.to);
  const totals = visible.map((bucket) => bucket.values.reduce((sum, value) => sum + value, 0));
  const top = niceCeiling(Math.max(0, ...totals));
  const y = (value: number) => TOP + PLOT_H - (value / top) * PLOT_H;
  // A source that keeps (almost) the whole range shades nothing: a sliver would only puzzle.
  const shadedTo = keptSince - range.from > span / 50 ? x(keptSince) : LEFT;
  const summary = `${title}: ${series.map((s, index) => `${visible.reduce((sum, bucket) => sum + (bucket.values[index] ?? 0), 0)} ${s.name}`).join(', ')}; at most ${Math.max(0, ...totals)} ${unit} in one bar.`;
  return html`<figure class="chart" id=${id} aria-labelledby=${`${id}-caption`}>
    <svg viewBox=${`0 0 ${WIDTH} ${HEIGHT}`} role="img" aria-labelledby=${`${id}-caption`} class="chart-svg">
      ${shadedTo > LEFT + 1 && html`<g class="chart-not-kept"><rect x=${LEFT} y=${TOP} width=${(shadedTo - LEFT).toFixed(1)} height=${PLOT_H}></rect>
        ${shadedTo - LEFT > 90 && html`<text x=${((LEFT + shadedTo) / 2).toFixed(1)} y=${TOP + PLOT_H / 2} text-anchor="middle">not kept</text>`}</g>`}
      ${[0, 0.5, 1].map((fraction) => html`<g class="chart-grid"><line x1=${LEFT} x2=${WIDTH - RIGHT} y1=${y(top * fraction).toFixed(1)} y2=${y(top * fraction).toFixed(1)}></line>
        <text x=${LEFT - 4} y=${(y(top * fraction) + 4).toFixed(1)} text-anchor="end">${(top * fraction).toLocaleString('en-GB')}</text></g>`)}
      <text class="chart-unit" x="2" y="13">${unit}</text>
      ${ticks(range).map((at) => html`<g class="chart-tick"><line x1=${x(at).toFixed(1)} x2=${x(at).toFixed(1)} y1=${TOP + PLOT_H} y2=${TOP + PLOT_H + 4}></line>
        ${awayFromEnds(x(at)) && html`<text x=${x(at).toFixed(1)} y=${HEIGHT - 6} text-anchor="middle">${range.tick(new Date(at))}</text>`}</g>`)}
      <line class="chart-axis" x1=${LEFT} x2=${WIDTH - RIGHT} y1=${TOP + PLOT_H + 0.5} y2=${TOP + PLOT_H + 0.5}></line>
      <line class="chart-axis" x1=${LEFT - 0.5} x2=${LEFT - 0.5} y1=${TOP} y2=${TOP + PLOT_H}></line>
      ${visible.map((bucket) => Bar({ bucket, series, x, y, range, unit }))}
      ${empty && html`<g class="chart-empty"><rect x=${LEFT + PLOT_W / 2 - 90} y=${TOP + 6} width="180" height="26" rx="4"></rect>
        <text x=${LEFT + PLOT_W / 2} y=${TOP + 24} text-anchor="middle">Nothing to show yet</text></g>`}
    </svg>
    <figcaption id=${`${id}-caption`}>
      <strong>${title}</strong>${' '}<span class="legend">${series.map((s) => html`<span class="legend-item"><span class=${`swatch ${s.className}`} aria-hidden="true"></span>${s.name}</span>`)}</span>
      ${empty ? html`<span class="chart-empty-note" id=${`${id}-empty`}>${empty}</span>` : html`<span class="sr-only">${summary}</span>`}
      ${shadedTo > LEFT + 1 && html`<span class="small muted chart-note">Shaded: ${notKept}</span>`}
    </figcaption>
    <details>
      <summary>The figures as a table</summary>
      <div class="table-wrap" tabindex="0" role="region" aria-label=${`${title}, figures`}><table>
        <thead><tr><th scope="col">Interval (UTC)</th>${series.map((s) => html`<th scope="col" class="num">${s.name} (${unit})</th>`)}</tr></thead>
        <tbody>${visible.length === 0
          ? html`<tr><td colspan=${series.length + 1}>No figures in this range.</td></tr>`
          : visible.map((bucket) => html`<tr><th scope="row">${range.row(bucket)}</th>${series.map((_, index) => html`<td class="num">${bucket.values[index] ?? 0}</td>`)}</tr>`)}</tbody>
      </table></div>
    </details>
  </figure>`;
}

/** A tick too near either end of the axis goes unlabelled: its label would be cut off or run into the next. */
function awayFromEnds(x: number): boolean {
  return x > LEFT + 20 && x < WIDTH - RIGHT - 24;
}

function ticks(range: ChartRange): number[] {
  const first = Math.ceil(range.from / range.tickMs) * range.tickMs;
  const out: number[] = [];
  for (let at = first; at <= range.to; at += range.tickMs) out.push(at);
  return out;
}

type BarProps = { bucket: ChartBucket; series: readonly ChartSeries[]; x: (at: number) => number; y: (value: number) => number; range: ChartRange; unit: string };

function Bar({ bucket, series, x, y, range, unit }: BarProps): View {
  const left = x(bucket.start);
  const width = Math.max(1, x(bucket.end) - left - (x(bucket.end) - left > 3 ? 1 : 0));
  let base = 0;
  return series.map((s, index) => {
    const value = bucket.values[index] ?? 0;
    if (value <= 0) return null;
    const from = y(base);
    base += value;
    const to = y(base);
    return html`<rect class=${s.className} x=${left.toFixed(1)} y=${to.toFixed(1)} width=${width.toFixed(1)} height=${(from - to).toFixed(1)}><title>${`${range.row(bucket)}: ${value} ${unit} ${s.name}`}</title></rect>`;
  });
}
