import { describe, expect, test } from "bun:test";
import type { Responsiveness, ResponsivenessPhase } from "../native/responsiveness-report.ts";
import { HistoryEntry } from "./history.ts";
import { reportHtml } from "./report-html.ts";
import { responsivenessHeadline } from "../native/responsiveness-runs.ts";

const phase = (p50: number, bps: number): ResponsivenessPhase => ({
  throughput_bps: bps, upload_bps: bps, download_bps: 0, latency_us: { p50, p90: p50 * 2, p99: p50 * 4 }, transactions: 100, rpm: 60e6 / p50, queueing_delay_us: {},
});
const phases = (loaded: number): Responsiveness => ({
  idle: phase(150, 0), upload: phase(loaded, 47e6), download: phase(loaded, 48e6), bidir: phase(loaded, 90e6), rpm: 60e6 / loaded, evidence: ["upload: client → server (upload) queue grew <here>"],
});
const entry = (id: string, r: Responsiveness) =>
  HistoryEntry.parse({ v: 3, id, time: "2026-12-04T20:00:00Z", mode: "client", peer: "10.0.0.2", transport: "tcp", test: "responsiveness", results: responsivenessHeadline(r), responsiveness: r });

/** The SVGs of a report, each with its title and body. */
const svgs = (html: string) => [...html.matchAll(/<svg [^>]*><title>([^<]*)<\/title>(.*?)<\/svg>/gs)].map((m) => ({ title: m[1]!, body: m[2]! }));

describe("the report's responsiveness runs", () => {
  const html = reportHtml([entry("r1", phases(50_000)), entry("r2", phases(4_000))], "h.jsonl");
  const charts = svgs(html);

  test("each run draws its probe's p50, p90 and p99 over the four phases, and the load's throughput per loaded phase", () => {
    const latency = charts.filter((c) => c.title === "Probe latency per phase (TCP 1-byte request/response)");
    expect(latency).toHaveLength(2);
    expect([...latency[0]!.body.matchAll(/<path d="M[^"]*"[^>]*><title>([^<]+)<\/title>/g)].map((m) => m[1])).toEqual(["p50", "p90", "p99"]);
    expect(latency[0]!.body.match(/<circle /g)).toHaveLength(12);
    for (const name of ["idle", "upload", "download", "bidir"]) expect(latency[0]!.body).toContain(`>${name}<`);
    const tput = charts.filter((c) => c.title === "Load throughput per phase");
    expect(tput).toHaveLength(2);
    expect([...tput[0]!.body.matchAll(/<rect [^>]*><title>([^<]+)<\/title>/g)].map((m) => m[1])).toEqual(["upload: 47.0 Mbit/s", "download: 48.0 Mbit/s", "bidir: 90.0 Mbit/s"]);
  });

  test("across runs, the kind's headline (bidir) by run; the RPM and escaped queue lines per run", () => {
    const titles = charts.map((c) => c.title);
    expect(titles).toContain("responsiveness: throughput by run");
    expect(titles).toContain("responsiveness: latency by run");
    expect(html).toContain("responsiveness 1200 RPM");
    expect(html).toContain("queue grew &lt;here&gt;");
  });

  test("a run interrupted before any phase says so", () => {
    expect(reportHtml([entry("r3", { evidence: [] })], "h.jsonl")).toContain("no phase measured");
  });
});

test("a run with UDP pings draws their p50 beside the TCP probe's percentiles", () => {
  const r = phases(50_000);
  for (const n of ["idle", "upload", "download", "bidir"] as const) r[n] = { ...r[n]!, udp_latency_us: { p50: 1000, p90: 2000, p99: 3000 }, udp_pings: 1400 };
  const [latency] = svgs(reportHtml([entry("u1", r)], "h.jsonl")).filter((c) => c.title === "Probe latency per phase (TCP 1-byte request/response, UDP pings)");
  expect([...latency!.body.matchAll(/<path d="M[^"]*"[^>]*><title>([^<]+)<\/title>/g)].map((m) => m[1])).toEqual(["p50", "p90", "p99", "UDP pings p50"]);
});
