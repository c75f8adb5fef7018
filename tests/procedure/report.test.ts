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
  expect(html).toContain("TCP bulk: throughput by run");
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
  // Throughput (bulk runs: no latency chart), CPU busy by run, the sweep curve; per detailed run (9) its streams and
  // each end's cores.
  expect(dom.stdout.match(/<svg /g)!.length).toBe(3 + 9 * 3);
  // A line per stream (16) in each detailed run, the by-run throughput line.
  expect(dom.stdout.match(/<path d="M/g)!.length).toBeGreaterThanOrEqual(1 + 9 * 16);
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

/**
 * A history of every kind of test, as a user's weeks of runs are: TCP bulk, UDP bulk, TCP_RR and TCP_CRR runs
 * interleaved, twelve of each, each with a diagnosis, retransmits and (request/response) latency percentiles.
 */
function mixedRuns(path: string): void {
  const kinds = [
    { transport: "tcp", test: "stream", results: (i: number) => ({ throughput_bps: 9e9 + i * 1e8, cpu_busy_percent: 30 + i }) },
    { transport: "udp", test: "stream", results: (i: number) => ({ throughput_bps: 8e8 + i * 1e6, packets_per_second: 70_000 + i, loss_percent: 0.01 * i, cpu_busy_percent: 20 + i }) },
    { transport: "tcp", test: "rr", results: (i: number) => ({ transactions_per_second: 60_000 + 100 * i, latency_p50_us: 16 + i / 10, latency_p99_us: 40 + i, cpu_busy_percent: 50 }) },
    { transport: "tcp", test: "crr", results: (i: number) => ({ transactions_per_second: 9_000 + 10 * i, latency_p50_us: 90 + i, latency_p99_us: 300 + 5 * i, cpu_busy_percent: 60 }) },
  ] as const;
  for (let i = 0; i < 48; i++) {
    const k = kinds[i % 4]!, j = Math.floor(i / 4);
    const rr = k.test !== "stream";
    const detail: RunDetail = {
      diagnosis: { verdict: i % 8 === 0 ? "receiver-cpu" : "link", evidence: [`run ${i + 1}`] },
      retransmits: k.transport === "tcp" ? 3 * j : undefined,
      ...(rr ? { latency_us: { min: 12, p50: k.results(j).latency_p50_us!, p90: (k.results(j).latency_p50_us! + k.results(j).latency_p99_us!) / 2, p99: k.results(j).latency_p99_us!, p999: 800 + 40 * j, max: 5000 + 100 * j } } : {}),
    };
    appendHistory(path, {
      v: HISTORY_VERSION, detail, id: `m${String(i).padStart(2, "0")}cafe`, time: new Date(Date.UTC(2026, 11, 3, 12, i)).toISOString(),
      argv: [], mode: "client", peer: "10.0.0.2", transport: k.transport, test: k.test, point: {}, results: k.results(j),
      summary: { bytes: 1, seconds: 10, throughput_bps: 8 }, errors: [],
    });
  }
}

/** The SVGs of a report, each with its title and body. */
const svgs = (html: string) => [...html.matchAll(/<svg [^>]*><title>([^<]*)<\/title>(.*?)<\/svg>/gs)].map((m) => ({ title: m[1]!, body: m[2]! }));

test("every kind of test has its own charts: bulk TCP, UDP, RR and CRR never share a line; RR latency as a CDF with p99.9; kind, retransmits and verdict columns", async () => {
  const hist = join(dir, "mixed.jsonl"), out = join(dir, "mixed.html");
  mixedRuns(hist);
  expect((await anyperf(["report", "--history", hist, "-o", out]).done).code).toBe(0);
  const html = readFileSync(out, "utf8");
  const charts = svgs(html);
  const titles = charts.map((c) => c.title);
  expect(titles).toEqual(expect.arrayContaining([
    "TCP bulk: throughput by run", "UDP bulk: throughput by run", "TCP RR: transactions/s by run", "TCP CRR: transactions/s by run",
    "TCP RR: latency by run", "TCP CRR: latency by run", "TCP RR: latency CDF (min, p50, p90, p99, p99.9, max)", "TCP CRR: latency CDF (min, p50, p90, p99, p99.9, max)", "CPU busy by run",
  ]));
  expect(titles).not.toContain("Throughput by run");
  // Each by-run line holds its kind's 12 runs only, at their run numbers (RR: 3, 7, ...; CRR: 4, 8, ...).
  const rr = charts.find((c) => c.title === "TCP RR: transactions/s by run")!;
  expect(rr.body.match(/<circle /g)).toHaveLength(12);
  expect(rr.body.match(/<path d="M/g)).toHaveLength(1);
  expect(charts.find((c) => c.title === "TCP bulk: throughput by run")!.body.match(/<circle /g)).toHaveLength(12);
  // p50, p99 and p99.9 by run; the CDF has a line per recent run, 6 points each, on a log axis of µs and ms.
  expect([...charts.find((c) => c.title === "TCP CRR: latency by run")!.body.matchAll(/<title>([^<]+)<\/title>/g)].map((m) => m[1])).toEqual(["p50", "p99", "p99.9"]);
  const cdf = charts.find((c) => c.title.startsWith("TCP RR: latency CDF"))!;
  expect(cdf.body.match(/<path d="M/g)).toHaveLength(6);
  expect(cdf.body.match(/<circle /g)).toHaveLength(36);
  expect(cdf.body).toContain(">20.0 µs<");
  expect(cdf.body).toContain(">1.00 ms<");
  // The table: kind, p99.9, retransmits (n/a for UDP) and verdict per run.
  expect(html).toContain("<th>kind</th>");
  expect(html).toContain("<th>latency p99.9</th><th>retransmits</th><th>verdict</th>");
  expect(html).toMatch(/<td>3<\/td><td>m02cafe<\/td><td>[^<]+<\/td><td>TCP RR<\/td>/);
  expect(html).toMatch(/<td>UDP bulk<\/td>.*?<td>n\/a<\/td><td>link<\/td>/);
});

test.skipIf(!chromium)("Chromium: no chart's labels overlap in the mixed report, and a screenshot of it", async () => {
  const hist = join(dir, "mixed-chromium.jsonl"), out = join(dir, "mixed-chromium.html"), probe = join(dir, "mixed-probe.html");
  mixedRuns(hist);
  expect((await anyperf(["report", "--history", hist, "-o", out]).done).code).toBe(0);
  // The report has no script; a copy with one measures every chart's text as laid out and lists the overlaps.
  const measure = `<script>
    const hits = [];
    for (const svg of document.querySelectorAll("svg")) {
      const texts = [...svg.querySelectorAll("text")].map((t) => ({ t: t.textContent, r: t.getBoundingClientRect() }));
      for (let i = 0; i < texts.length; i++) for (let j = i + 1; j < texts.length; j++) {
        const a = texts[i].r, b = texts[j].r;
        if (a.left < b.right - 1 && b.left < a.right - 1 && a.top < b.bottom - 1 && b.top < a.bottom - 1) hits.push(svg.querySelector("title").textContent + ": " + texts[i].t + " / " + texts[j].t);
      }
    }
    document.body.insertAdjacentHTML("beforeend", "<pre id=overlaps>" + JSON.stringify(hits) + "</pre>");
  </script>`;
  writeFileSync(probe, readFileSync(out, "utf8").replace("</body>", `${measure}</body>`));
  const dom = await headless("--dump-dom", "--window-size=1400,1000", `file://${probe}`);
  expect(dom.code).toBe(0);
  const overlaps = JSON.parse(/<pre id="overlaps">(.*?)<\/pre>/s.exec(dom.stdout)![1]!.replace(/&quot;/g, '"').replace(/&lt;/g, "<").replace(/&gt;/g, ">").replace(/&amp;/g, "&"));
  expect(overlaps).toEqual([]);
  const shot = process.env.ANYPERF_SCREENSHOT_DIR ? join(process.env.ANYPERF_SCREENSHOT_DIR, "report-mixed.png") : join(dir, "report-mixed.png");
  expect((await headless(`--screenshot=${shot}`, "--window-size=1400,2000", `file://${out}`)).code).toBe(0);
  expect(readFileSync(shot).subarray(1, 4).toString()).toBe("PNG");
}, 200_000);
