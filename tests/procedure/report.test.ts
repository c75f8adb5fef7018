/**
 * `anyperf report`: the history as one self-contained HTML file. A real loopback sweep's history becomes a report;
 * a 10-run history stays under 500 KB; headless Chromium (skipped when absent) renders the file: the SVG path and
 * rect elements are in its DOM and its screenshot is far from a blank page's. No ports: loopback picks its own.
 */
import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { spawnProc } from "../support/processes.ts";
import { appendHistory, HISTORY_VERSION, type HistoryEntryInput } from "../../src/procedure/history.ts";
import { MAX_POINTS, type RunDetail } from "../../src/procedure/run-detail.ts";
import { MAX_CHART_STREAMS } from "../../src/report/svg-charts.ts";

const MAIN = join(import.meta.dir, "..", "..", "main.ts");
const anyperf = (args: string[], limitMs = 60_000) => spawnProc([process.execPath, MAIN, ...args], limitMs);
const dir = mkdtempSync(join(tmpdir(), "anyperf-report-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const chromium = Bun.which("chromium") ?? Bun.which("chromium-browser");
if (!chromium) console.warn("report chromium tests: SKIPPED, chromium not found: apt-get install chromium");

/** A run's detail at the bounds a history line keeps: 16 streams × 60 points, 64 cores at each end, a diagnosis. */
function fullDetail(i: number): RunDetail {
  const t = Array.from({ length: MAX_POINTS }, (_, p) => p + 1);
  const cores = Array.from({ length: 64 }, (_, cpu) => ({ cpu, user: 12.3, system: 23.4 + (cpu % 7), softirq: cpu === 5 ? 60.1 : 4.5, irq: 0.7, idle: 55.1, iowait: 0.1, busy: 44.8 }));
  return {
    over_time: { t, streams: Array.from({ length: MAX_CHART_STREAMS }, (_, id) => ({ id, side: "recv", bps: t.map((p) => 1.23e9 + id * 1.1e7 + ((p * 7919) % 97) * 1e6) })), streams_total: 32 },
    cpu_per_core: cores,
    remote_cpu_per_core: cores,
    diagnosis: { verdict: "receiver-cpu", evidence: [`run ${i}: cpu5 of the receiver was 99.0 % busy, 60.1 % in softirq`, "spread the flows over more receive queues (RSS) or cores"] },
  };
}

/**
 * Ten runs as a sweep writes them: streams=1,2,4,8,16 × 2 repeats, with every headline figure and host fact; the
 * first a version-1 line (no detail), the others version 2 with detail at its bounds.
 */
function tenRuns(path: string): void {
  for (let i = 0; i < 10; i++) {
    const streams = String(2 ** Math.floor(i / 2));
    const entry: HistoryEntryInput = {
      v: i === 0 ? 1 : HISTORY_VERSION,
      ...(i === 0 ? {} : { detail: fullDetail(i) }), id: `r${i}abcdef`, time: new Date(Date.UTC(2026, 11, 3, 12, 0, i)).toISOString(),
      argv: ["client", "10.0.0.2", "--sweep", "streams=1,2,4,8,16", "--repeat", "2", "-t", "10"],
      mode: "client", peer: "10.0.0.2", transport: "tcp", test: "stream", group: "g1", point: { streams }, repeat: (i % 2) + 1,
      host: { kernel: "6.1.0-18-amd64", cpu_model: "Intel(R) Xeon(R) Platinum 8370C CPU @ 2.80GHz", interface: "eth0", nic_driver: "mlx5_core", link_speed_bps: 100e9, mtu: 1500, sysctls: { "net.ipv4.tcp_rmem": "4096 131072 6291456", "net.ipv4.tcp_wmem": "4096 16384 4194304", "net.ipv4.tcp_congestion_control": "cubic" } },
      results: { throughput_bps: 1e9 * Number(streams) * (1 + i / 100), latency_p50_us: 40 + i, latency_p99_us: 120 + 3 * i, cpu_busy_percent: 10 + 5 * i },
      summary: { bytes: 1.25e9 * Number(streams), seconds: 10, throughput_bps: 1e9 * Number(streams), retransmits: i, rtt_us: 50 },
      errors: i === 9 ? ["peer <reset> the connection & left"] : [],
    };
    appendHistory(path, entry);
  }
}

test("report -o: one HTML file from a real loopback sweep's history, charts inline, nothing external", async () => {
  const hist = join(dir, "real.jsonl"), out = join(dir, "real.html");
  const run = await anyperf(["loopback", "-t", "0.3", "--sweep", "streams=1,2", "--repeat", "2", "--history", hist]).done;
  expect(run.code).toBe(0);
  const r = await anyperf(["report", "--history", hist, "-o", out]).done;
  expect(r.stderr).toBe("");
  expect(r.code).toBe(0);
  expect(r.stdout).toContain("4 runs");
  const html = readFileSync(out, "utf8");
  expect(html.match(/<svg /g)!.length).toBeGreaterThanOrEqual(3);
  expect(html).toContain("Sweep streams");
  expect(html).toContain("Throughput by run");
  expect(html.match(/class="error-bar"/g)!.length).toBe(2);
  // Self-contained: no URL other than the SVG namespace, no script.
  expect(html.replace(/xmlns="http:\/\/www\.w3\.org\/2000\/svg"/g, "")).not.toMatch(/https?:|src=|<link|<script/i);
});

test("report IDS: only the runs named (unique prefixes); unknown id and missing -o are one-line errors", async () => {
  const hist = join(dir, "ten-ids.jsonl"), out = join(dir, "two.html");
  tenRuns(hist);
  const r = await anyperf(["report", "--history", hist, "r3", "r7", "-o", out]).done;
  expect(r.code).toBe(0);
  const html = readFileSync(out, "utf8");
  expect(html).toContain(">r3abcdef<");
  expect(html).toContain(">r7abcdef<");
  expect(html).not.toContain(">r4abcdef<");
  const bad = await anyperf(["report", "--history", hist, "zz", "-o", out]).done;
  expect(bad.code).toBe(1);
  expect(bad.stderr).toContain("no run 'zz'");
  const noOut = await anyperf(["report", "--history", hist]).done;
  expect(noOut.code).toBe(2);
  expect(noOut.stderr).toContain("-o report.html");
  expect(noOut.stderr).not.toContain("    at ");
});

test("ten runs with detail at its bounds weigh under 500 KB, and data text is escaped", async () => {
  const hist = join(dir, "ten.jsonl"), out = join(dir, "ten.html");
  tenRuns(hist);
  const r = await anyperf(["report", "--history", hist, "-o", out]).done;
  expect(r.code).toBe(0);
  expect(statSync(out).size).toBeLessThan(500 * 1024);
  const html = readFileSync(out, "utf8");
  expect(html).toContain("peer &lt;reset&gt; the connection &amp; left");
  // A sweep bar per point (5) with its min–max error bar, CPU bars per run (10), and per detailed run (9) the 8
  // busiest cores of each end with their 5 non-zero modes.
  expect(html.match(/class="error-bar"/g)!.length).toBe(5);
  expect(html.match(/<rect /g)!.length).toBe(15 + 9 * 2 * 8 * 5);
  // Each title twice: the chart's heading and its <title>.
  expect(html.match(/Throughput per stream \(16 of 32\)/g)!.length).toBe(2 * 9);
  expect(html.match(/CPU per core by mode, remote end \(the 8 busiest of 64 cores\)/g)!.length).toBe(2 * 9);
  expect(html).toContain("<b>receiver-cpu</b>: run 3: cpu5 of the receiver was 99.0 % busy");
  expect(html).toContain("recorded before per-run detail was kept (history schema 1)");
});

const headless = (...args: string[]) =>
  spawnProc([chromium!, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run", `--user-data-dir=${mkdtempSync(join(dir, "profile-"))}`, ...args], 90_000).done;

test.skipIf(!chromium)("Chromium renders the report: SVG paths and rects in the DOM, a screenshot far from blank", async () => {
  const hist = join(dir, "ten-chromium.jsonl"), out = join(dir, "chromium.html");
  tenRuns(hist);
  expect((await anyperf(["report", "--history", hist, "-o", out]).done).code).toBe(0);
  const dom = await headless("--dump-dom", `file://${out}`);
  expect(dom.code).toBe(0);
  // Throughput, latency p50/p99, CPU busy by run, the sweep curve; per detailed run (9) its streams and each end's cores.
  expect(dom.stdout.match(/<svg /g)!.length).toBe(4 + 9 * 3);
  // A line per stream (16) in each detailed run, the by-run lines (throughput, p50, p99).
  expect(dom.stdout.match(/<path d="M/g)!.length).toBeGreaterThanOrEqual(3 + 9 * 16);
  expect(dom.stdout.match(/<rect /g)!.length).toBe(15 + 9 * 2 * 8 * 5);
  const shot = join(dir, "report.png"), blankShot = join(dir, "blank.png"), blank = join(dir, "blank.html");
  writeFileSync(blank, "<!DOCTYPE html><html><body></body></html>");
  expect((await headless(`--screenshot=${shot}`, "--window-size=1200,900", `file://${out}`)).code).toBe(0);
  expect((await headless(`--screenshot=${blankShot}`, "--window-size=1200,900", `file://${blank}`)).code).toBe(0);
  const png = readFileSync(shot);
  expect(png.subarray(1, 4).toString()).toBe("PNG");
  // A blank page compresses to a few KB; charts, axes and text make the PNG many times larger.
  expect(png.length).toBeGreaterThan(5 * statSync(blankShot).size);
  if (process.env.ANYPERF_SCREENSHOT) writeFileSync(process.env.ANYPERF_SCREENSHOT, png);
}, 200_000);
