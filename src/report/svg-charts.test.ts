import { expect, test } from "bun:test";
import { barChart, escapeXml, lineChart, MARGIN, niceCeil, scale, stackedBarChart } from "./svg-charts.ts";

test("scale maps the domain onto the range, and a zero-width domain onto the middle", () => {
  const s = scale(0, 10, 100, 200);
  expect([s(0), s(5), s(10)]).toEqual([100, 150, 200]);
  expect(scale(3, 3, 0, 40)(3)).toBe(20);
});

test("niceCeil rounds up to 1, 2 or 5 × 10^k", () => {
  expect([niceCeil(0.7), niceCeil(1), niceCeil(1.2), niceCeil(3), niceCeil(7), niceCeil(9.4e9), niceCeil(0)]).toEqual([1, 1, 2, 5, 10, 1e10, 1]);
});

test("escapeXml escapes the five markup characters", () => {
  expect(escapeXml(`<a href="x">'&'</a>`)).toBe("&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;");
});

test("lineChart places points on the plot area: x from min to max, y from 0 to the rounded-up max", () => {
  // 560×260 default: plot x 84..544, y 220 (0) .. 28 (yMax = niceCeil(8) = 10).
  const svg = lineChart({ title: "t", xLabel: "x", yLabel: "y", series: [{ name: "s", points: [{ x: 1, y: 0 }, { x: 2, y: 5 }, { x: 3, y: 8 }] }] });
  const d = svg.match(/<path d="([^"]+)"/)![1];
  expect(d).toBe(`M${MARGIN.left},220 L314,124 L544,66.4`);
  expect(svg.match(/<circle /g)!.length).toBe(3);
  expect(svg.startsWith('<svg xmlns="http://www.w3.org/2000/svg" width="560" height="260"')).toBe(true);
});

test("lineChart draws one path per series and a legend when there are several", () => {
  const svg = lineChart({ title: "lat", xLabel: "run", yLabel: "µs", series: [{ name: "p50", points: [{ x: 1, y: 10 }] }, { name: "p99", points: [{ x: 1, y: 40 }] }] });
  expect(svg.match(/<path d=/g)!.length).toBe(2);
  expect(svg).toContain(">p50</text>");
  expect(svg).toContain(">p99</text>");
});

test("barChart: one rect per bar and an error bar from low to high", () => {
  // 2 bars over 460 px: slot 230 (centres 199, 429), bar 138 wide; yMax 10 → value 4 at y 143.2, low 3 at 162.4, high 5 at 124.
  const svg = barChart({ title: "sweep", yLabel: "v", bars: [{ label: "streams=1", value: 4, low: 3, high: 5 }, { label: "streams=2", value: 10 }] });
  expect(svg).toContain(`<rect x="130" y="143.2" width="138" height="76.8"`);
  expect(svg).toContain(`<rect x="360" y="28" width="138" height="192"`);
  expect(svg).toContain(`d="M199,162.4 L199,124 M164.5,162.4 L233.5,162.4 M164.5,124 L233.5,124"`);
  expect(svg.match(/class="error-bar"/g)!.length).toBe(1);
});

test("text from data is escaped everywhere it lands", () => {
  const evil = `</svg><script>alert(1)</script>`;
  const svg = barChart({ title: evil, yLabel: evil, bars: [{ label: evil, value: 1 }] }) + lineChart({ title: evil, xLabel: evil, yLabel: evil, series: [{ name: evil, points: [{ x: 0, y: 1 }] }, { name: evil, points: [] }] });
  expect(svg).not.toContain("<script>");
  expect(svg.match(/<\/svg>/g)!.length).toBe(2);
});

test("empty data still gives a well-formed chart", () => {
  expect(lineChart({ title: "t", xLabel: "x", yLabel: "y", series: [] })).toMatch(/^<svg[^]*<\/svg>$/);
  expect(barChart({ title: "t", yLabel: "y", bars: [] })).toMatch(/^<svg[^]*<\/svg>$/);
});

test("stackedBarChart stacks each bar's non-zero parts bottom up, one colour and legend entry per series", () => {
  // yMax 100 over 220..28: 1.92 px per unit; one bar over 460 px less the legend's strip ("system": 42 px): centre
  // 293, 292.6 wide, its right edge (439.3) clear of the legend (from 502).
  const svg = stackedBarChart({ title: "cpu", yLabel: "%", yMax: 100, bars: [{ label: "cpu0", parts: [{ series: "user", value: 25 }, { series: "nice", value: 0 }, { series: "system", value: 50 }] }] });
  expect(svg).toContain(`<rect x="146.7" y="172" width="292.6" height="48" fill="#1f77b4">`);
  expect(svg).toContain(`<rect x="146.7" y="76" width="292.6" height="96" fill="#d62728">`);
  expect(svg.match(/<rect /g)!.length).toBe(2);
  expect(svg).toContain(">user</text>");
  expect(svg).toContain(">system</text>");
});

test("a long line chart: no dot per point with dots: false, and at most 12 x ticks", () => {
  const points = Array.from({ length: 100 }, (_, i) => ({ x: i, y: i }));
  const svg = lineChart({ title: "t", xLabel: "s", yLabel: "y", dots: false, series: [{ name: "a", points }] });
  expect(svg).not.toContain("<circle");
  const ticks = svg.match(/y="234" text-anchor="middle" font-size="10"/g)!.length;
  expect(ticks).toBeLessThanOrEqual(12);
  expect(ticks).toBeGreaterThanOrEqual(10);
});

test("x tick labels that would touch are left out: a last, partial interval close to the one before", () => {
  const points = [1, 2, 3, 4.25, 4.29].map((x) => ({ x, y: 1 }));
  const svg = lineChart({ title: "t", xLabel: "s", yLabel: "y", series: [{ name: "a", points }] });
  const ticks = [...svg.matchAll(/y="234" text-anchor="middle" font-size="10">([^<]+)</g)].map((m) => m[1]);
  expect(ticks).toEqual(["1", "2", "3", "4.25"]);
});

test("bar labels too wide for their slot are thinned, every n-th drawn", () => {
  const bars = Array.from({ length: 40 }, (_, i) => ({ label: `r${i}abcdef`, value: i }));
  const svg = barChart({ title: "t", yLabel: "y", bars });
  const labels = [...svg.matchAll(/y="234" text-anchor="middle" font-size="10">([^<]+)</g)].map((m) => m[1]);
  // 460 px over 40 bars is 11.5 px a slot; the widest label ("r10abcdef") needs 60 px: every 6th.
  expect(labels).toEqual(["r0abcdef", "r6abcdef", "r12abcdef", "r18abcdef", "r24abcdef", "r30abcdef", "r36abcdef"]);
});
