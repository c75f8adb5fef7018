import type { Target, Unit } from "./report.ts";

/** Table cells: figures scaled for reading; results.json keeps the raw values. */

export function formatFigure(v: number, unit: Unit): string {
  switch (unit) {
    case "bit/s":
      return v >= 1e9 ? `${(v / 1e9).toFixed(2)} Gbit/s` : `${(v / 1e6).toFixed(1)} Mbit/s`;
    case "packets/s":
      return `${(v / 1e3).toFixed(1)}k pkt/s`;
    case "trans/s":
      return `${(v / 1e3).toFixed(1)}k trans/s`;
    case "conn/s":
      return `${(v / 1e3).toFixed(2)}k conn/s`;
    case "ms":
      return `${v.toFixed(1)} ms`;
    case "bytes":
      // Decimal MB, the stricter reading of the "150 MB" (ru_maxrss is KiB: 150 MB = 146 484 KiB).
      return `${(v / 1e6).toFixed(1)} MB`;
  }
}

export function formatTarget(t: Target, unit: Unit): string {
  switch (t.kind) {
    case "ratio-at-least":
      return `≥ ${t.value.toFixed(2)}`;
    case "anyperf-at-most":
      return `≤ ${formatFigure(t.value, unit).replace(/\.0 /, " ")}`;
    case "cost-at-most-percent":
      return `cost ≤ ${t.value} %`;
    case "cost-shown":
    case "figure-shown":
      return "not judged";
  }
}

/** A latency in µs, as ms from 1 ms up. */
export function formatMicros(us: number): string {
  return us >= 1000 ? `${(us / 1000).toFixed(2)} ms` : `${us.toFixed(0)} µs`;
}

export function formatPercent(v: number | null): string {
  return v === null ? "—" : `${Math.round(v)} %`;
}

/** Plain-text table: columns padded to their widest cell, a rule under the heading. */
export function renderTable(head: string[], rows: string[][]): string {
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? "").length)));
  const line = (cells: string[]) => cells.map((c, i) => c.padEnd(widths[i]!)).join("  ").trimEnd();
  return [line(head), widths.map((w) => "-".repeat(w)).join("  "), ...rows.map(line)].join("\n");
}
