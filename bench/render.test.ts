import { expect, test } from "bun:test";
import { renderReport } from "./render.ts";
import type { BenchReport, Row, Side } from "./report.ts";

const side = (label: string, figure: number | null, extra: Record<string, number> = {}, errors: string[] = []): Side => ({
  label,
  how: `${label} -t T`,
  samples: [figure, figure, figure],
  statistic: "median",
  figure,
  cpu_percent: figure === null ? null : 97.4,
  extra,
  errors,
});

const row = (over: Partial<Row>): Row => ({
  id: "x",
  workload: "TCP bulk, 1 stream",
  unit: "bit/s",
  target: { kind: "ratio-at-least", value: 1.1 },
  cpu_scope: "client+server",
  reference: side("iperf3", 20e9),
  anyperf: side("anyperf", 23e9),
  ratios: [1.15, 1.3, 0.9],
  ratio: 1.15,
  met: true,
  skipped: null,
  ...over,
});

const report: BenchReport = {
  started_at: "2026-12-02T00:00:00Z",
  finished_at: "2026-12-02T00:05:00Z",
  elapsed_s: 300,
  quick: false,
  repeats: 3,
  seconds: 4,
  host: { cores: 2, kernel: "6.18", loadavg_start: "1.00", loadavg_end: "2.00" },
  anyperf: { path: "dist/anyperf", version: "anyperf 0.1.0" },
  peers: {},
  rows: [
    row({}),
    row({ workload: "UDP 1400", reference: side("iperf3", 2e9, { loss_percent: 12.34 }), anyperf: side("anyperf", 1e9, { loss_percent: 40 }), ratios: [0.5], ratio: 0.5, met: false, target: { kind: "ratio-at-least", value: 1 } }),
    row({ workload: "TCP bulk, 2 streams (ntttcp)", reference: null, anyperf: null, ratio: null, met: null, skipped: "ntttcp-for-linux not installed" }),
    row({ workload: "/status polled", target: { kind: "cost-at-most-percent", value: 2 }, ratio: 0.99, met: true }),
    row({ workload: "rig polled", target: { kind: "cost-shown" }, ratio: 0.95, met: null, anyperf: { ...side("anyperf", 23e9), samples: Array(6).fill(23e9) } }),
    row({ workload: "srv", anyperf: side("anyperf iperf3 -s", null, {}, ["anyperf iperf3 -s -1 -p 24600 exited 1: boom"]), ratio: null, met: null }),
  ],
};

test("one table line per row with figures, ratio, target, CPU and verdict", () => {
  const lines = renderReport(report).split("\n");
  const at = (w: string) => lines.find((l) => l.startsWith(w))!.split(/\s{2,}/);
  expect(at("TCP bulk, 1 stream")).toEqual(["TCP bulk, 1 stream", "iperf3 20.00 Gbit/s", "23.00 Gbit/s", "1.15 (0.90–1.30)", "≥ 1.10", "97 %", "97 %", "met"]);
  expect(at("UDP 1400")).toEqual(["UDP 1400", "iperf3 2.00 Gbit/s, 12.3 % lost", "1.00 Gbit/s, 40.0 % lost", "0.50", "≥ 1.00", "97 %", "97 %", "MISSED"]);
  expect(at("/status polled").at(-1)).toBe("met (cost 1.0 %)");
  expect(at("rig polled").slice(-4)).toEqual(["not judged", "97 %", "97 %", "shown (cost 5.0 %)"]);
  expect(at("srv").slice(2)).toEqual(["error", "—", "≥ 1.10", "97 %", "—", "error"]);
  expect(at("TCP bulk, 2 streams (ntttcp)").slice(1)).toEqual(["—", "—", "—", "≥ 1.10", "—", "—", "skipped"]);
});

test("skipped rows say why, failed runs say what failed, counts add up", () => {
  const text = renderReport(report);
  expect(text).toContain("2 of 3 measured targets met; 1 rows skipped, 1 rows without a result.");
  expect(text).toContain("Skipped:\n  TCP bulk, 2 streams (ntttcp): ntttcp-for-linux not installed");
  expect(text).toContain("  rig polled [CPU: client+server] (6 repeats: a small effect next to the run-to-run spread)");
  expect(text).toContain("  TCP bulk, 1 stream [CPU: client+server]\n");
  expect(text).toContain("srv / anyperf iperf3 -s failed 3 of 3 runs: anyperf iperf3 -s -1 -p 24600 exited 1: boom");
});
