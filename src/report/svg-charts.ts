/**
 * Charts as inline SVG strings: pure functions of their data, so a report file and the live page draw the same
 * charts, with no script and nothing fetched at view time. Every text that came from data goes through escapeXml.
 */

export interface ChartPoint {
  x: number;
  y: number;
}
export interface Series {
  name: string;
  points: readonly ChartPoint[];
}
export interface Bar {
  label: string;
  value: number;
  /** The error bar's ends (e.g. the min and max of repeats); drawn when both are given. */
  low?: number;
  high?: number;
}
export interface ChartFrame {
  title: string;
  yLabel: string;
  width?: number;
  height?: number;
  /** Formats an axis value (e.g. bits/s with a unit); default: up to 3 significant digits. */
  format?: (v: number) => string;
}

/** Streams one chart draws at most, the report's and the live page's: more lines than this are a blur. */
export const MAX_CHART_STREAMS = 16;

export const MARGIN = { left: 84, right: 16, top: 28, bottom: 40 } as const;
const COLOURS = ["#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b"];

export function escapeXml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]!);
}

/** Maps [d0, d1] onto [r0, r1]; a zero-width domain maps to the middle of the range rather than dividing by zero. */
export function scale(d0: number, d1: number, r0: number, r1: number): (v: number) => number {
  if (d1 === d0) return () => (r0 + r1) / 2;
  return (v) => r0 + ((v - d0) / (d1 - d0)) * (r1 - r0);
}

/** The smallest 1, 2 or 5 × 10^k at or above v, so the y axis ends on a round figure. */
export function niceCeil(v: number): number {
  if (!(v > 0)) return 1;
  const p = 10 ** Math.floor(Math.log10(v));
  for (const m of [1, 2, 5, 10]) if (m * p >= v) return m * p;
  return 10 * p;
}

const r2 = (v: number) => Math.round(v * 100) / 100;
const defaultFormat = (v: number) => (Math.abs(v) >= 1000 ? Math.round(v).toLocaleString("en-US") : String(Number(v.toPrecision(3))));

function frame(f: ChartFrame, yMax: number, body: string, xAxis: string, legend = ""): string {
  const w = f.width ?? 560, h = f.height ?? 260;
  const fmt = f.format ?? defaultFormat;
  const y = scale(0, yMax, h - MARGIN.bottom, MARGIN.top);
  const ticks = [0, 0.25, 0.5, 0.75, 1].map((t) => {
    const v = t * yMax, py = r2(y(v));
    return `<line x1="${MARGIN.left}" y1="${py}" x2="${w - MARGIN.right}" y2="${py}" stroke="#ddd"/><text x="${MARGIN.left - 4}" y="${py + 4}" text-anchor="end" font-size="10">${escapeXml(fmt(v))}</text>`;
  });
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${w}" height="${h}" viewBox="0 0 ${w} ${h}" font-family="sans-serif" role="img"><title>${escapeXml(f.title)}</title>` +
    `<text x="${w / 2}" y="16" text-anchor="middle" font-size="13" font-weight="bold">${escapeXml(f.title)}</text>` +
    `<text x="12" y="${h / 2}" transform="rotate(-90 12 ${h / 2})" text-anchor="middle" font-size="11">${escapeXml(f.yLabel)}</text>` +
    ticks.join("") + xAxis + body + legend + `</svg>`;
}

/** Width of a label at font-size 10, generously (sans-serif digits and letters average under 6 px). */
const labelWidth = (text: string) => text.length * 6 + 6;

/** At most this many x ticks: a long series (a live run, a run's intervals) gets every n-th. */
const MAX_X_TICKS = 12;

/** Ticks of a logarithmic axis over [x0, x1] (x0 > 0): 1, 2 and 5 × 10^k, or the powers of ten alone over a wide range. */
function logTicks(x0: number, x1: number): number[] {
  const out: number[] = [];
  const steps = Math.log10(x1 / x0) > 3 ? [1] : [1, 2, 5];
  for (let k = Math.floor(Math.log10(x0)); 10 ** k <= x1; k++) for (const m of steps) if (m * 10 ** k >= x0 && m * 10 ** k <= x1) out.push(m * 10 ** k);
  return out;
}

/**
 * A line chart: one polyline path per series over a shared x axis (x ticks at the points' x values, or on a
 * logarithmic axis (`xLog`, x > 0) at 1-2-5 steps). `dots: false` leaves out a circle per point, for long series (a
 * live run's intervals, per-stream lines).
 */
export function lineChart(f: ChartFrame & { xLabel: string; series: readonly Series[]; dots?: boolean; xLog?: boolean; xFormat?: (v: number) => string; yMax?: number; xDomain?: readonly [number, number] }): string {
  const w = f.width ?? 560, h = f.height ?? 260;
  const all = f.series.flatMap((s) => s.points).filter((p) => !f.xLog || p.x > 0);
  const lx = (v: number) => (f.xLog ? Math.log10(v) : v);
  const xs = all.map((p) => p.x);
  // `xDomain` lines up charts drawn one above the other (the live page's throughput and latency on one time axis).
  const [x0, x1] = f.xDomain ?? [xs.length ? Math.min(...xs) : 1, xs.length ? Math.max(...xs) : 10];
  const yMax = f.yMax ?? niceCeil(Math.max(0, ...all.map((p) => p.y)));
  const lin = scale(lx(x0), lx(x1), MARGIN.left, w - MARGIN.right), y = scale(0, yMax, h - MARGIN.bottom, MARGIN.top);
  const x = (v: number) => lin(lx(v));
  const body = f.series.map((s, i) => {
    const c = COLOURS[i % COLOURS.length];
    const points = s.points.filter((p) => !f.xLog || p.x > 0);
    const d = points.map((p, j) => `${j === 0 ? "M" : "L"}${r2(x(p.x))},${r2(y(p.y))}`).join(" ");
    const dots = f.dots === false ? "" : points.map((p) => `<circle cx="${r2(x(p.x))}" cy="${r2(y(p.y))}" r="2.5" fill="${c}"/>`).join("");
    return `<path d="${d}" fill="none" stroke="${c}" stroke-width="2"><title>${escapeXml(s.name)}</title></path>${dots}`;
  }).join("");
  const distinct = f.xLog ? logTicks(x0, x1) : [...new Set(xs)].sort((a, b) => a - b);
  const every = Math.ceil(distinct.length / MAX_X_TICKS);
  const xFormat = f.xFormat ?? defaultFormat;
  // A tick whose label would touch the one before it is left out (a last, partial interval sits close to the one before).
  let lastRight = -Infinity;
  const xTicks = distinct.filter((_, i) => i % every === 0).map((v) => {
    const text = xFormat(v), half = labelWidth(text) / 2, px = x(v);
    if (px - half < lastRight) return "";
    lastRight = px + half;
    return `<text x="${r2(px)}" y="${h - MARGIN.bottom + 14}" text-anchor="middle" font-size="10">${escapeXml(text)}</text>`;
  }).join("");
  const xAxis = xTicks + `<text x="${w / 2}" y="${h - 6}" text-anchor="middle" font-size="11">${escapeXml(f.xLabel)}</text>`;
  const legend = f.series.length > 1
    ? f.series.map((s, i) => `<text x="${w - MARGIN.right}" y="${MARGIN.top + 12 * (i + 1)}" text-anchor="end" font-size="10" fill="${COLOURS[i % COLOURS.length]}">${escapeXml(s.name)}</text>`).join("")
    : "";
  return frame(f, yMax, body, xAxis, legend);
}

/**
 * Every how many bars a label is drawn so that none overlaps the next: all of them where they fit their slot, else
 * every n-th (each bar's <title> still names it).
 */
export function labelStride(labels: readonly string[], slot: number): number {
  const widest = Math.max(0, ...labels.map(labelWidth));
  return Math.max(1, Math.ceil(widest / Math.max(1, slot)));
}

/** A bar chart, one rect per bar, with an error bar from low to high where a bar has both. */
export function barChart(f: ChartFrame & { bars: readonly Bar[]; xLabel?: string }): string {
  const w = f.width ?? 560, h = f.height ?? 260;
  const yMax = niceCeil(Math.max(0, ...f.bars.map((b) => Math.max(b.value, b.high ?? 0))));
  const y = scale(0, yMax, h - MARGIN.bottom, MARGIN.top);
  const slot = (w - MARGIN.left - MARGIN.right) / Math.max(1, f.bars.length);
  const bw = slot * 0.6;
  const stride = labelStride(f.bars.map((b) => b.label), slot);
  const body = f.bars.map((b, i) => {
    const cx = MARGIN.left + slot * (i + 0.5);
    const top = y(b.value);
    let s = `<rect x="${r2(cx - bw / 2)}" y="${r2(top)}" width="${r2(bw)}" height="${r2(y(0) - top)}" fill="${COLOURS[0]}"><title>${escapeXml(`${b.label}: ${(f.format ?? defaultFormat)(b.value)}`)}</title></rect>`;
    if (b.low !== undefined && b.high !== undefined) {
      const lo = r2(y(b.low)), hi = r2(y(b.high)), cap = r2(bw / 4);
      s += `<path class="error-bar" d="M${r2(cx)},${lo} L${r2(cx)},${hi} M${r2(cx - cap)},${lo} L${r2(cx + cap)},${lo} M${r2(cx - cap)},${hi} L${r2(cx + cap)},${hi}" stroke="#000" stroke-width="1.5" fill="none"/>`;
    }
    return s + (i % stride === 0 ? `<text x="${r2(cx)}" y="${h - MARGIN.bottom + 14}" text-anchor="middle" font-size="10">${escapeXml(b.label)}</text>` : "");
  }).join("");
  return frame(f, yMax, body, f.xLabel === undefined ? "" : `<text x="${w / 2}" y="${h - 6}" text-anchor="middle" font-size="11">${escapeXml(f.xLabel)}</text>`);
}

export interface StackedBar {
  label: string;
  /** The segments bottom up, each named by its series (its colour and legend entry). */
  parts: readonly { series: string; value: number }[];
}

/** A stacked bar chart (CPU modes per core): one rect per non-zero segment, a legend of the series in order. */
export function stackedBarChart(f: ChartFrame & { bars: readonly StackedBar[]; yMax?: number }): string {
  const w = f.width ?? 560, h = f.height ?? 260;
  // Series with a value somewhere, in order: a mode idle on every bar gets no colour and no legend line.
  const names = [...new Set(f.bars.flatMap((b) => b.parts.filter((p) => p.value > 0).map((p) => p.series)))];
  const colour = (name: string) => COLOURS[names.indexOf(name) % COLOURS.length];
  const yMax = f.yMax ?? niceCeil(Math.max(0, ...f.bars.map((b) => b.parts.reduce((a, p) => a + Math.max(0, p.value), 0))));
  const y = scale(0, yMax, h - MARGIN.bottom, MARGIN.top);
  // The legend gets its own strip on the right, so it never lies over a bar.
  const legendWidth = Math.max(0, ...names.map(labelWidth));
  const slot = (w - MARGIN.left - MARGIN.right - legendWidth) / Math.max(1, f.bars.length);
  const bw = slot * 0.7;
  const stride = labelStride(f.bars.map((b) => b.label), slot);
  const body = f.bars.map((b, i) => {
    const cx = MARGIN.left + slot * (i + 0.5);
    let base = 0;
    const rects = b.parts.filter((p) => p.value > 0).map((p) => {
      const top = y(base + p.value), bottom = y(base);
      base += p.value;
      return `<rect x="${r2(cx - bw / 2)}" y="${r2(top)}" width="${r2(bw)}" height="${r2(bottom - top)}" fill="${colour(p.series)}"><title>${escapeXml(`${b.label} ${p.series}: ${(f.format ?? defaultFormat)(p.value)}`)}</title></rect>`;
    }).join("");
    return rects + (i % stride === 0 ? `<text x="${r2(cx)}" y="${h - MARGIN.bottom + 14}" text-anchor="middle" font-size="10">${escapeXml(b.label)}</text>` : "");
  }).join("");
  const legend = names.map((n, i) => `<text x="${w - MARGIN.right}" y="${MARGIN.top + 12 * (i + 1)}" text-anchor="end" font-size="10" fill="${colour(n)}">${escapeXml(n)}</text>`).join("");
  return frame(f, yMax, body, "", legend);
}
